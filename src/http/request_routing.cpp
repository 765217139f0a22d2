#include "http/request_routing.hpp"

#include "core/log.hpp"
#include "core/log_throttle.hpp"

namespace portico::http {

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

void serve_location(ServerContext& server, Exchange& client, int location) {
    const LocationServing& serving = server.serving[static_cast<size_t>(location)];
    Exchange& exchange = serving.filter ? serving.filter->wrap(client) : client;
    for (Handler* handler : serving.handlers)
        if (handler->serve(exchange)) return;
    exchange.respond_text(404, status_text(404));
}

}  // namespace portico::http
