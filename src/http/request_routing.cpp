#include "http/request_routing.hpp"

#include <string>

#include "http/https_redirect.hpp"
#include "http/status.hpp"
#include "router/path.hpp"

namespace portico::http {

namespace {

void redirect_to_https(ServerContext& server, const Request& request, Exchange& client) {
    std::string target = https_location(request, server.https_port);
    if (target.empty()) {
        client.respond_text(400, "A Host header is needed to redirect to https.\n");
        return;
    }
    // 301 may turn a POST into a GET; 308 keeps the method and body.
    int status = request.method_name == "GET" || request.is_head() ? 301 : 308;
    static constexpr std::string_view body = "Moved to https.\n";
    client.begin_response(status, body.size());
    client.add_header("Location", target);
    client.add_header("Content-Type", "text/plain; charset=utf-8");
    client.send_body(body);
    client.end_response();
}

}  // namespace

int route_request(ServerContext& server, Request& request, Exchange& client) {
    router::NormalizedPath normalized = router::normalize_path(request.path, request.normalized_path);
    request.path_had_encoded_slash = normalized.had_encoded_slash;
    if (normalized.error != router::PathError::none) {
        client.respond_text(400, status_text(400));
        return -1;
    }
    if (server.redirect_http && !request.secure && !is_acme_challenge(request.normalized_path)) {
        redirect_to_https(server, request, client);
        return -1;
    }
    int location = server.router.match(request.normalized_path);
    if (location < 0) client.respond_text(404, status_text(404));
    return location;
}

void serve_location(ServerContext& server, Exchange& client, int location) {
    auto index = static_cast<size_t>(location);
    ResponseFilter* filter = server.filters[index].get();
    Exchange& exchange = filter ? filter->wrap(client) : client;
    for (auto& handler : server.handlers[index])
        if (handler->serve(exchange)) return;
    exchange.respond_text(404, status_text(404));
}

}  // namespace portico::http
