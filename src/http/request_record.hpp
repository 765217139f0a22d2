// A finished request, as the counters and the access log hear of it,
// whichever protocol carried it: one record per request, built by the
// HTTP/1.1 connection or the HTTP/2 stream from its own timeline.
#pragma once

#include <cstdint>
#include <string_view>

#include <uv.h>

#include "http/peer_address.hpp"
#include "http/request.hpp"
#include "http/request_state.hpp"
#include "http/server_context.hpp"
#include "transport/transport.hpp"

namespace portico::http {

struct FinishedRequest {
    const Request& request;  // what was parsed of it (no method: the line was not)
    const RequestState& state;              // client, location, timeline, the proxy's part
    const transport::Transport& transport;  // the connection's: TLS or not
    int status = 0;
    uint64_t response_bytes = 0;  // written to the client, head and body
    uint64_t head_bytes = 0;      // the part of them that was the head
    uint64_t sendfile_bytes = 0;  // the part sent with sendfile(2)
};

// Writes the request's access-log line; `duration_ns` as counted.
void log_finished_request(ServerContext& server, const FinishedRequest& finished,
                          uint64_t duration_ns);

// Counts the request in this worker's counters and writes its access-log
// line. Inline: on the hot path (access log off in benchmarks) the record
// is built in place rather than passed.
inline void record_finished_request(ServerContext& server, const FinishedRequest& finished) {
    finished.request.give_back_held();
    uint64_t duration_ns = uv_hrtime() - finished.state.start_ns;
    metrics::RequestRecord record;
    record.status = finished.status;
    record.response_bytes = finished.response_bytes;
    record.sendfile_bytes = finished.sendfile_bytes;
    record.duration_ns = duration_ns;
    record.proxied = finished.state.proxied;
    record.upstream_ns = finished.state.upstream_ns;
    server.counters.request_finished(finished.state.location, record);
    if (server.access_log.enabled()) [[unlikely]]
        log_finished_request(server, finished, duration_ns);
}

}  // namespace portico::http
