// The real client behind trusted proxies (nginx's realip module with
// set_real_ip_from, real_ip_header X-Forwarded-For, real_ip_recursive on):
// a request whose peer is in [server] trusted_proxies is from the rightmost
// X-Forwarded-For entry that is not itself trusted, and keeps the
// X-Request-ID the proxy gave it. One server step, composed only when
// trusted_proxies is set (worker/composition.cpp): without it no request
// pays a look at its headers.
#pragma once

#include <span>
#include <string_view>

#include "config/config.hpp"
#include "http/peer_address.hpp"
#include "http/request.hpp"
#include "http/request_step.hpp"

namespace portico::http {

// One X-Forwarded-For entry: "203.0.113.7", "2001:db8::1", with a port as
// some balancers write it ("203.0.113.7:5173", "[2001:db8::1]:443"),
// spaces around it ignored. False for anything else ("unknown", a name).
bool parse_forwarded_address(std::string_view entry, PeerAddress& out);

// Who the request is from, given its `peer`: walking X-Forwarded-For (every
// such header, as one list, RFC 9110 5.3) from the right while the address
// in hand is trusted, each entry replacing it. So: the rightmost entry that
// is not trusted; the leftmost when all are; the last trusted one when the
// next entry is not an address (nginx keeps it too); `peer` itself when it
// is not trusted or sent no X-Forwarded-For.
PeerAddress forwarded_client(const Request& request, std::span<const config::AddressRange> trusted,
                             const PeerAddress& peer);

// An X-Request-ID worth keeping: 1 to 128 visible ASCII characters (it goes
// into upstream request heads and the access log as it is).
bool is_acceptable_request_id(std::string_view id);

// The step. A request from a peer that is not trusted keeps its address,
// and its X-Request-ID is not taken ($request_id is made fresh).
class ForwardedClient final : public RequestStep {
public:
    explicit ForwardedClient(std::span<const config::AddressRange> trusted) : trusted_(trusted) {}
    StepResult answer(Request& request, Exchange& client) override;

private:
    std::span<const config::AddressRange> trusted_;
};

}  // namespace portico::http
