// The key a limit counts a request under: its `key` template expanded and
// hashed with the table's seed. "$remote_addr" alone, the key nearly every
// config uses, hashes the address's bytes instead of its text (nginx's
// $binary_remote_addr): no formatting on the request path.
#pragma once

#include <cstdint>
#include <string>

#include "access/key_table.hpp"
#include "config/template.hpp"
#include "http/exchange.hpp"

namespace portico::access {

class LimitKey {
public:
    explicit LimitKey(const config::Template& key);
    // False when the key expands to "": the request is not counted.
    // Inline: every request of a limited location takes it.
    // `client`: the exchange's client_address().
    bool hash(const KeyTable& table, const http::Exchange& exchange,
              const http::PeerAddress& client, uint64_t& out) {
        if (client_address_) [[likely]] {
            if (client.any.sa_family == AF_INET) [[likely]] {
                // Above the address's 32 bits, its family: never an IPv6 key's.
                out = table.hash(uint64_t{4} << 32 | client.v4.sin_addr.s_addr);
                return true;
            }
        }
        return hash_other(table, exchange, client, out);
    }
    // The key as text, for a log line.
    std::string text(const http::Exchange& exchange) const;

private:
    bool hash_other(const KeyTable& table, const http::Exchange& exchange,
                    const http::PeerAddress& client, uint64_t& out);

    const config::Template& key_;
    bool client_address_;  // the template is "$remote_addr" alone
    std::string scratch_;
};

}  // namespace portico::access
