#include "http/request_routing.hpp"

#include "core/log.hpp"
#include "http/admission.hpp"
#include "http/path_encoding.hpp"
#include "http/redirect_response.hpp"
#include "core/log_throttle.hpp"
#include "http/template_expand.hpp"

namespace portico::http {

void answer_add_slash(const Request& request, Exchange& client) {
    // From the normalized path, percent-encoded: it can't become "//host"
    // (an open redirect), as the static directory redirect.
    std::string location;
    append_encoded_path(location, request.normalized_path);
    location += '/';
    if (!request.query.empty()) {
        location += '?';
        location += request.query;
    }
    answer_redirect(client, 301, location, status_text(301));
}

void answer_reroute_loop(ServerContext& server, const Request& request, Exchange& client) {
    static core::LogThrottle throttle;
    uint64_t left_out = 0;
    if (throttle.allow(uv_now(server.loop), left_out)) {
        log::error(
            "request {} was rerouted more than {} times, answered 500 ({} more since the "
            "last line): a rewrite, try_files or error_pages loop; check the location's "
            "rules",
            request.target, max_reroutes, left_out);
    }
    client.respond_text(500, status_text(500));
}

bool choose_site(ServerContext& server, Request& request, Exchange& client, size_t& site) {
    std::string host_buffer;
    std::string_view host = normalize_host(request.host, host_buffer);
    site = server.sites.select(request.listener, host);
    if (request.tls_server_name.empty()) return true;
    // nginx too chooses the server by SNI first and keeps it for a request
    // without Host.
    std::string sni_buffer;
    size_t by_sni =
        server.sites.select(request.listener, normalize_host(request.tls_server_name, sni_buffer));
    if (host.empty()) {
        site = by_sni;
        return true;
    }
    // RFC 9110 7.4: the connection (its certificate, which an HTTP/2 client
    // reuses for every name it covers) is another site's.
    if (by_sni == site) return true;
    client.respond_text(421, status_text(421));
    return false;
}

void serve_location(ServerContext& server, Exchange& client, int location) {
    const LocationServing& serving = server.serving[static_cast<size_t>(location)];
    Exchange& exchange = serving.filter ? serving.filter->wrap(client) : client;
    // A location without checks has no gate: one test, then its handlers.
    if (serving.gate != nullptr) [[unlikely]]
        serving.gate->serve(exchange);
    else
        serve_handlers(serving.handlers, exchange);
}

void serve_handlers(std::span<Handler* const> handlers, Exchange& exchange) {
    for (Handler* handler : handlers)
        if (handler->serve(exchange)) return;
    exchange.respond_text(404, status_text(404));
}

}  // namespace portico::http
