// What a location changes in the request its upstream gets, prepared once
// per worker at composition (nginx's proxy_pass URI and proxy_set_header):
// the target, with proxy_path in place of the matched prefix or a rewritten
// URI, and the proxy_headers, which replace portico's own headers and the
// client's of the same name. A location with neither pays a test of two
// empty fields per request. And what it changes in the response: its
// expires (hide_headers is read from the location).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "http/expires.hpp"
#include "http/location_captures.hpp"
#include "http/peer_address.hpp"
#include "http/request.hpp"
#include "http/response_head.hpp"

namespace portico::proxy {

class UpstreamRequestRules {
public:
    // The headers portico adds to every upstream request, each of which a
    // proxy_headers rule of the same name replaces (or removes).
    enum Default : uint8_t {
        host = 1 << 0,
        forwarded_for = 1 << 1,
        real_ip = 1 << 2,
        forwarded_proto = 1 << 3,
        forwarded_host = 1 << 4,
        request_id = 1 << 5,
    };

    explicit UpstreamRequestRules(const config::LocationConfig& location);
    UpstreamRequestRules(const UpstreamRequestRules&) = delete;
    UpstreamRequestRules& operator=(const UpstreamRequestRules&) = delete;

    const config::LocationConfig& location() const { return location_; }
    bool replaces(Default header) const { return (replaced_ & header) != 0; }
    bool has_headers() const { return !location_.proxy_headers.empty(); }
    // A rule sets this header (case-insensitive): the client's is not sent.
    // Asked for every client header: a name of a length no rule has is
    // answered by one bit test.
    bool sets(std::string_view name) const {
        return (set_lengths_ >> length_bit(name.size()) & 1) != 0 && sets_by_name(name);
    }

    // The target in origin form: as received, unless proxy_path replaces
    // the location's prefix or a rewrite changed the URI; then the
    // normalized path (percent-encoded again) and the query.
    void write_target(http::ResponseHead& head, const http::Request& request) const;
    // The rules' headers, those whose value is not empty. `client_ip` is
    // `client` formatted ($remote_addr), which the head has already.
    void write_headers(http::ResponseHead& head, const http::Request& request,
                       const http::PeerAddress& client, std::string_view client_ip);

    // The location's expires, in place of the upstream's Cache-Control and
    // Expires; null without one.
    http::ExpiresHeaders* expires() { return expires_ ? &*expires_ : nullptr; }

private:
    // How a rule's value is written, chosen at composition: the usual
    // values skip the template's expansion and its scratch copy.
    enum class Kind : uint8_t {
        line,         // a literal: `line` is the whole "Name: value\r\n"
        server_port,  // "$server_port": `line` for the port `port`, redone on a change
        remote_addr,  // "$remote_addr": the formatted client address, no `line`
        expanded,     // any other template: `line` is "Name: "
    };
    struct Written {
        Kind kind;
        const config::HeaderRule* rule;
        std::string line;
        int port = -1;
    };

    static unsigned length_bit(size_t length) { return length < 63 ? unsigned(length) : 63; }
    bool sets_by_name(std::string_view name) const;
    void write_port_line(Written& written, const http::Request& request);

    const config::LocationConfig& location_;
    uint8_t replaced_ = 0;
    uint64_t set_lengths_ = 0;  // bit n: a rule's name has n characters (63: 63 or more)
    std::vector<Written> written_;
    http::LocationCaptures captures_;
    std::string scratch_;
    std::optional<http::ExpiresHeaders> expires_;
};

}  // namespace portico::proxy
