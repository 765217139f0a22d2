#include "access/limit_key.hpp"

#include <arpa/inet.h>

#include <cstring>

#include "http/template_expand.hpp"

namespace portico::access {

LimitKey::LimitKey(const config::Template& key)
    : key_(key),
      client_address_(key.parts.size() == 1 &&
                      key.parts[0].variable == config::Variable::remote_addr) {}

bool LimitKey::hash_other(const KeyTable& table, const http::Exchange& exchange,
                          const http::PeerAddress& client, uint64_t& out) {
    if (client_address_) {
        char bytes[17];
        bytes[0] = 6;
        std::memcpy(bytes + 1, &client.v6.sin6_addr, 16);
        out = table.hash(std::string_view(bytes, sizeof bytes));
        return true;
    }
    scratch_.clear();
    http::expand(key_, exchange.request(), client, {}, scratch_);
    if (scratch_.empty()) return false;
    out = table.hash(scratch_);
    return true;
}

std::string LimitKey::text(const http::Exchange& exchange) const {
    std::string text;
    http::expand(key_, exchange.request(), exchange.client_address(), {}, text);
    return text;
}

}  // namespace portico::access
