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
    bool sets(std::string_view name) const;

    // The target in origin form: as received, unless proxy_path replaces
    // the location's prefix or a rewrite changed the URI; then the
    // normalized path (percent-encoded again) and the query.
    void write_target(http::ResponseHead& head, const http::Request& request) const;
    // The rules' headers, those whose value is not empty.
    void write_headers(http::ResponseHead& head, const http::Request& request,
                       const http::PeerAddress& client);

    // The location's expires, in place of the upstream's Cache-Control and
    // Expires; null without one.
    http::ExpiresHeaders* expires() { return expires_ ? &*expires_ : nullptr; }

private:
    const config::LocationConfig& location_;
    uint8_t replaced_ = 0;
    http::LocationCaptures captures_;
    std::string scratch_;
    std::optional<http::ExpiresHeaders> expires_;
};

}  // namespace portico::proxy
