#include "http/request_routing.hpp"

#include <string>

#include "http/status.hpp"

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

void answer_unrouted(ServerContext& server, const Request& request, Exchange& client, int status) {
    if (status == 301) redirect_to_https(server, request, client);
    else client.respond_text(status, status_text(status));
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
