#include "http/request_routing.hpp"

namespace portico::http {

void serve_location(ServerContext& server, Exchange& client, int location) {
    const LocationServing& serving = server.serving[static_cast<size_t>(location)];
    Exchange& exchange = serving.filter ? serving.filter->wrap(client) : client;
    for (Handler* handler : serving.handlers)
        if (handler->serve(exchange)) return;
    exchange.respond_text(404, status_text(404));
}

}  // namespace portico::http
