// The steps every request takes between its head and its handler, whichever
// protocol brought it (HTTP/1.1 connection or HTTP/2 stream): the path
// normalized, the https redirect, the location found, and its handlers run
// through its filter.
#pragma once

#include "http/exchange.hpp"
#include "http/https_redirect.hpp"
#include "http/request.hpp"
#include "http/server_context.hpp"
#include "router/path.hpp"

namespace portico::http {

// Answers a request with no location: 400 for a path that can't be
// normalized, the redirect_http redirect, 404.
void answer_unrouted(ServerContext& server, const Request& request, Exchange& client, int status);

// Normalizes the request's path and finds its location. Returns the
// location's index, or -1 after answering the request itself on `client`
// (400 for a path that can't be normalized, the redirect_http redirect on a
// cleartext listener, 404 when no location matches). Inline: every
// request takes it.
inline int route_request(ServerContext& server, Request& request, Exchange& client) {
    router::NormalizedPath normalized = router::normalize_path(request.path, request.normalized_path);
    request.path_had_encoded_slash = normalized.had_encoded_slash;
    if (normalized.error != router::PathError::none) [[unlikely]] {
        answer_unrouted(server, request, client, 400);
        return -1;
    }
    if (server.redirect_http && !request.secure && !is_acme_challenge(request.normalized_path)) {
        answer_unrouted(server, request, client, 301);
        return -1;
    }
    int location = server.router.match(request.normalized_path);
    if (location < 0) [[unlikely]] answer_unrouted(server, request, client, 404);
    return location;
}

// Runs the location's handlers, through its filter when it has one; 404
// when every handler declines.
void serve_location(ServerContext& server, Exchange& client, int location);

}  // namespace portico::http
