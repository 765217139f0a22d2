// The per-worker state every client connection shares, whichever protocol
// it speaks: the config snapshot, the compiled locations and what serves
// each (composed by the worker: worker/composition.hpp), the counters and
// the recycled buffers. Owned by the worker.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "config/config.hpp"
#include "core/buffer_pool.hpp"
#include "core/http_date.hpp"
#include "core/io_poller.hpp"
#include "http/exchange.hpp"
#include "http/request_step.hpp"
#include "http/response_filter.hpp"
#include "metrics/access_log.hpp"
#include "metrics/worker_counters.hpp"
#include "router/sites.hpp"
#include "transport/send_buffer.hpp"

namespace portico::http {

// A client connection as the worker's drain sees it, whichever protocol
// it speaks.
class OpenConnection {
public:
    // An HTTP/2 session sends GOAWAY (an HTTP/1.1 connection says
    // "Connection: close" on its next response, see ServerContext::draining).
    virtual void announce_drain() = 0;
    // Closes the connection now if it is between requests.
    virtual void close_if_idle() = 0;

    OpenConnection* next = nullptr;  // in ServerContext::connections
    OpenConnection* prev = nullptr;

protected:
    ~OpenConnection() = default;
};

class AdmissionGate;
class LocationHeaders;

// What serves one location: its steps (rewrite, access), its admission
// checks (limits, allow/deny, auth), its handlers, tried in order, and the
// filter between them and the client (compression), or nullptr.
struct LocationServing {
    std::vector<RequestStep*> steps;
    // The checks before the handlers (http/admission.hpp); none: nullptr,
    // and the handlers are served at once.
    AdmissionGate* gate = nullptr;
    std::vector<Handler*> handlers;
    ResponseFilter* filter = nullptr;
    LocationHeaders* headers = nullptr;  // its `headers`, added to its heads; none: nullptr
    // A handler streams request bodies, so the location is served as soon
    // as the head is in.
    bool streams_body = false;
};

struct ServerContext {
    ServerContext(uv_loop_t* loop, const config::Config& config, metrics::WorkerCounters counters,
                  unsigned worker_index);

    uv_loop_t* loop;
    core::IoPoller poller;  // the sockets' readiness (client and upstream)
    const config::Config& config;
    metrics::WorkerCounters counters;  // this worker's slot of the shared counters
    metrics::AccessLog access_log;
    unsigned worker_index;
    router::Sites sites;  // the site for a host, and each site's locations
    core::DateCache date;
    core::BufferPool buffers;
    // What runs before the location is found (redirect_http), and what
    // serves each: serving[i] is config.locations[i]. Filled by the
    // worker's composition.
    std::vector<RequestStep*> server_steps;
    std::vector<LocationServing> serving;
    transport::SendBuffer send_buffer;

    // Set when the worker drains: connections finish what they are doing,
    // say "Connection: close", and idle ones close.
    bool draining = false;
    // Every open connection, so a drain can reach the idle ones.
    OpenConnection* connections = nullptr;
    size_t connection_count = 0;
    void add_connection(OpenConnection& connection);
    void remove_connection(OpenConnection& connection);
    // Called after a connection is freed (the worker resumes accepting, or
    // exits when draining and none is left).
    std::function<void()> on_connection_closed;
};

}  // namespace portico::http
