// The way every request takes between its head and its handler, whichever
// protocol brought it (HTTP/1.1 connection or HTTP/2 stream), in nginx's
// phase order: the path normalized, the server's steps (redirect_http),
// the location found, the location's steps, then its content handlers
// through its response filter. The steps and handlers are composed by the
// worker (ServerContext::server_steps, LocationServing).
#pragma once

#include <span>

#include "http/exchange.hpp"
#include "http/request.hpp"
#include "http/request_state.hpp"
#include "http/server_context.hpp"
#include "http/status.hpp"
#include "router/path.hpp"
#include "transport/transport.hpp"

namespace portico::http {

// 301 to the request's path with a slash added, its query kept.
void answer_add_slash(const Request& request, Exchange& client);

// 500 for a request rerouted more than max_reroutes times (a rewrite or
// error page loop), logged at most once a second.
void answer_reroute_loop(ServerContext& server, const Request& request, Exchange& client);

// What a request takes from the connection it came on: TLS or not, its
// listener and that listener's port, the SNI. Both codecs call it once per
// request, before route_request.
inline void take_connection(Request& request, const transport::Transport& connection) {
    request.secure = connection.secure();
    request.listener = connection.listener;
    request.server_port = connection.local_port;
    if (request.secure) request.tls_server_name = connection.server_name();
}

// The site of a request on a listener with several (ServerContext::sites):
// by Host, else by SNI, else the listener's default. False when answered:
// 421 for a Host of another site than its TLS connection's SNI.
bool choose_site(ServerContext& server, Request& request, Exchange& client, size_t& site);

enum class LocationChoice : uint8_t {
    found,              // `location` is set: serve it
    answered,           // a step answered on `client`
    no_match,           // no location matches the path
    add_slash,          // a proxied prefix's path without its slash (router::Router::add_slash)
    too_many_reroutes,  // more than max_reroutes: a rewrite or error page loop
};

// Finds the location for request.normalized_path among the site's (`router`) and runs its steps,
// again after a step reroutes the request. Shared by route_request and the error pages (which
// answer their URI through the locations). Inline: every request takes it.
[[gnu::always_inline]] inline LocationChoice choose_location(ServerContext& server,
                                                             const router::Router& router,
                                                             Request& request, Exchange& client,
                                                             int& location) {
    for (int reroutes = 0;; ++reroutes) {
        location = router.match(request.normalized_path);
        if (location < 0) [[unlikely]]
            return location == router::Router::add_slash ? LocationChoice::add_slash
                                                         : LocationChoice::no_match;
        StepResult result = StepResult::next;
        for (RequestStep* step : server.serving[static_cast<size_t>(location)].steps)
            if ((result = step->answer(request, client)) != StepResult::next) break;
        if (result == StepResult::next) return LocationChoice::found;
        if (result == StepResult::answered) return LocationChoice::answered;
        if (reroutes == max_reroutes) [[unlikely]]
            return LocationChoice::too_many_reroutes;
    }
}

// Normalizes the request's path, runs the steps before the content and
// finds its site and location (state.location), again after a step
// reroutes it.
// False when the request was answered on `client` already: 400 for a path
// that can't be normalized, a step's answer, 404 when no location matches,
// 500 past max_reroutes. Inline, and forced so: every request takes it,
// and GCC stopped inlining it on its own once sites and reroutes were in.
[[gnu::always_inline]] inline bool route_request(ServerContext& server, Request& request,
                                                 Exchange& client, RequestState& state) {
    router::NormalizedPath normalized = router::normalize_path(request.path, request.normalized_path);
    request.path_had_encoded_slash = normalized.had_encoded_slash;
    if (normalized.error != router::PathError::none) [[unlikely]] {
        client.respond_text(400, status_text(400));
        return false;
    }
    for (RequestStep* step : server.server_steps)
        if (step->answer(request, client) == StepResult::answered) return false;
    size_t site = 0;
    if (!server.sites.single() && !choose_site(server, request, client, site)) [[unlikely]]
        return false;
    request.server_name = server.sites.server_name(site);
    switch (choose_location(server, server.sites.router(site), request, client, state.location)) {
    case LocationChoice::found:
        return true;
    case LocationChoice::answered:
        return false;
    case LocationChoice::no_match:
        client.respond_text(404, status_text(404));
        return false;
    case LocationChoice::add_slash:
        state.location = -1;
        answer_add_slash(request, client);
        return false;
    case LocationChoice::too_many_reroutes:
        answer_reroute_loop(server, request, client);
        return false;
    }
    return false;
}

// Runs the location's admission checks if it has any (its gate), then its
// handlers, through its filter when it has one; 404 when every handler
// declines.
void serve_location(ServerContext& server, Exchange& client, int location);
// The same, from a list of handlers, on `exchange` as it is.
void serve_handlers(std::span<Handler* const> handlers, Exchange& exchange);

}  // namespace portico::http
