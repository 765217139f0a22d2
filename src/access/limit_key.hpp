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
    bool hash(const KeyTable& table, const http::Exchange& exchange, uint64_t& out);
    // The key as text, for a log line.
    std::string text(const http::Exchange& exchange) const;

private:
    const config::Template& key_;
    bool client_address_;  // the template is "$remote_addr" alone
    std::string scratch_;
};

}  // namespace portico::access
