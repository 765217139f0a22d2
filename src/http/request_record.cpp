#include "http/request_record.hpp"

#include <arpa/inet.h>

#include <ctime>

#include <uv.h>

namespace portico::http {

void record_finished_request(ServerContext& server, const FinishedRequest& finished) {
    uint64_t duration_ns = uv_hrtime() - finished.start_ns;
    metrics::RequestRecord record;
    record.status = finished.status;
    record.response_bytes = finished.response_bytes;
    record.sendfile_bytes = finished.sendfile_bytes;
    record.duration_ns = duration_ns;
    record.proxied = finished.proxied;
    record.upstream_ns = finished.upstream_ns;
    server.counters.request_finished(finished.location, record);
    if (!server.access_log.enabled()) return;
    const Request& request = finished.request;
    char ip[INET6_ADDRSTRLEN];
    metrics::AccessRecord entry;
    entry.client_ip = format_ip(finished.peer, ip, sizeof ip);
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
    entry.location = finished.location >= 0
                         ? std::string_view(server.config.locations[static_cast<size_t>(finished.location)].name)
                         : metrics::no_location_name;
    entry.worker = server.worker_index;
    entry.request_ns = duration_ns;
    entry.proxied = finished.proxied;
    entry.upstream_ns = finished.upstream_ns;
    entry.connect_ns = finished.connect_ns;
    entry.upstream_server = finished.upstream_server;
    if (finished.tls) {
        entry.tls_protocol = finished.tls->protocol();
        entry.tls_cipher = finished.tls->cipher();
    }
    server.access_log.log(entry);
}

}  // namespace portico::http
