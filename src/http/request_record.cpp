#include "http/request_record.hpp"

#include <arpa/inet.h>

#include <ctime>

namespace portico::http {

void log_finished_request(ServerContext& server, const FinishedRequest& finished,
                          uint64_t duration_ns) {
    const Request& request = finished.request;
    char ip[INET6_ADDRSTRLEN];
    metrics::AccessRecord entry;
    entry.client_ip = format_ip(finished.state.client, ip, sizeof ip);
    entry.time = time(nullptr) - static_cast<time_t>(duration_ns / 1'000'000'000);
    entry.method = request.method_name;
    entry.target = request.target;
    entry.version_major = request.version_major;
    entry.version_minor = request.version_minor;
    entry.status = finished.status;
    entry.body_bytes = finished.response_bytes > finished.head_bytes
                           ? finished.response_bytes - finished.head_bytes
                           : 0;
    entry.referer = request.header("referer");
    entry.user_agent = request.header("user-agent");
    entry.location =
        finished.state.location >= 0
            ? std::string_view(
                  server.config.locations[static_cast<size_t>(finished.state.location)].name)
            : metrics::no_location_name;
    entry.worker = server.worker_index;
    entry.request_ns = duration_ns;
    entry.proxied = finished.state.proxied;
    entry.upstream_ns = finished.state.upstream_ns;
    entry.connect_ns = finished.state.connect_ns;
    entry.upstream_server = finished.state.upstream_server;
    if (finished.transport.secure()) {
        entry.tls_protocol = finished.transport.tls_protocol();
        entry.tls_cipher = finished.transport.tls_cipher();
    }
    // The id sent upstream, or one made now: a line can be matched with the
    // app's log, and a static one still has its own.
    entry.request_id = request_id(request);
    entry.refused_by = request.refused_by;
    entry.cache_result = request.cache_result;
    server.access_log.log(entry);
}

}  // namespace portico::http
