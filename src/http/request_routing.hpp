// The steps every request takes between its head and its handler, whichever
// protocol brought it (HTTP/1.1 connection or HTTP/2 stream): the path
// normalized, the https redirect, the location found, and its handlers run
// through its filter.
#pragma once

#include "http/exchange.hpp"
#include "http/request.hpp"
#include "http/server_context.hpp"

namespace portico::http {

// Normalizes the request's path and finds its location. Returns the
// location's index, or -1 after answering the request itself on `client`
// (400 for a path that can't be normalized, the redirect_http redirect on a
// cleartext listener, 404 when no location matches).
int route_request(ServerContext& server, Request& request, Exchange& client);

// Runs the location's handlers, through its filter when it has one; 404
// when every handler declines.
void serve_location(ServerContext& server, Exchange& client, int location);

}  // namespace portico::http
