// The heads that cross the proxy: the request as it goes upstream, and the
// response as it goes back, each without the hop-by-hop headers (RFC 9110
// 7.6.1) and with the X-Forwarded-* ones added.
#pragma once

#include <sys/socket.h>

#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "http/exchange.hpp"
#include "http/expires.hpp"
#include "http/request.hpp"
#include "http/response_head.hpp"
#include "proxy/response_parser.hpp"
#include "proxy/upstream_request_rules.hpp"

namespace portico::proxy {

// Writes the upstream request head into `head`: method, the target in origin
// form (rules.write_target), Host (the client's with preserve_host, else
// `server_host`), the client's end-to-end headers, X-Forwarded-For
// (appended), -Proto, -Host, X-Real-IP, X-Request-ID ($request_id), then the
// location's proxy_headers (which replace any of those, and a client's
// header of the same name), the body's framing (Content-Length as the
// client sent it, or Transfer-Encoding: chunked for a chunked body, which
// the proxy encodes again); and Connection/Upgrade for a WebSocket
// handshake. Connection is otherwise left out when the connection will be
// pooled (HTTP/1.1 keeps it alive), and "close" when it will not
// (`keep_alive` false: the upstream then closes it itself, instead of
// arming its keep-alive timer for a connection we are about to close).
void write_upstream_request_head(http::ResponseHead& head, const http::Request& request,
                                 const http::PeerAddress& client, UpstreamRequestRules& rules,
                                 std::string_view server_host, bool websocket, bool keep_alive);

// Adds the upstream response's end-to-end headers to the client response,
// but those named in `hidden` (hide_headers, lowercase). Date and Server are
// portico's own (nginx's proxy_hide_header defaults); the body framing is
// the exchange's. For a 101, Upgrade and Connection go through: the tunnel
// needs them. With `expires` (the location's, else null), a status it
// applies to gets its Cache-Control and Expires instead of the upstream's
// (nginx's expires); other statuses keep the upstream's.
void add_upstream_response_headers(http::Exchange& exchange, const UpstreamResponse& response,
                                   const std::vector<std::string>& hidden,
                                   http::ExpiresHeaders* expires);

// True for a WebSocket handshake the location lets through.
bool is_websocket_request(const http::Request& request, const config::LocationConfig& location);

}  // namespace portico::proxy
