// The per-worker state every client connection shares: the config snapshot,
// the compiled locations, and the recycled buffers. Owned by the worker.
#pragma once

#include <uv.h>

#include <functional>
#include <memory>
#include <vector>

#include "compress/compressed_cache.hpp"
#include "compress/encoder_memory.hpp"
#include "config/config.hpp"
#include "core/buffer_pool.hpp"
#include "core/http_date.hpp"
#include "core/io_poller.hpp"
#include "metrics/access_log.hpp"
#include "metrics/worker_counters.hpp"
#include "http/exchange.hpp"
#include "http/request_state.hpp"
#include "http/response_filter.hpp"
#include "proxy/upstream.hpp"
#include "router/router.hpp"
#include "static/file_cache.hpp"
#include "static/mime.hpp"
#include "tls/server_tls.hpp"
#include "tls/tls_stream.hpp"

namespace portico::http {

class ClientConnection;

struct ServerContext {
    ServerContext(uv_loop_t* loop, const config::Config& config, metrics::WorkerCounters counters,
                  unsigned worker_index);

    uv_loop_t* loop;
    core::IoPoller poller;  // the sockets' readiness (client and upstream)
    const config::Config& config;
    metrics::WorkerCounters counters;  // this worker's slot of the shared counters
    metrics::AccessLog access_log;
    unsigned worker_index;
    router::Router router;
    core::DateCache date;
    core::BufferPool buffers;
    // What the proxy reads from upstreams: 64 KiB, so a large response takes
    // few read/writev pairs (nginx's proxy_buffers are 8 x 8 KiB).
    core::BufferPool upstream_buffers{64 * 1024};
    RequestStatePool request_states;
    staticfiles::MimeTypes mime;
    staticfiles::FileCache file_cache;
    // Static bodies compressed whole, for every compress location: a hot
    // asset is compressed once, not per request (compress/compressed_cache.hpp).
    compress::CompressedCache compressed_cache{32 * 1024 * 1024};
    // The state of finished gzip and br streams, for the next ones (no page
    // faults per response; compress/encoder_memory.hpp). Declared before
    // the filters, whose encoders give it back when they go.
    compress::EncoderMemory encoder_memory{8 * 1024 * 1024};
    // upstreams[i] is config.upstreams[i] in this worker.
    std::vector<std::unique_ptr<proxy::Upstream>> upstreams;
    // handlers[i] serve config.locations[i], tried in order (declared last:
    // they refer to the members above).
    std::vector<std::vector<std::unique_ptr<Handler>>> handlers;
    // filters[i]: what stands between location i's handlers and the client
    // (compression), or nullptr: the handlers answer the connection itself.
    std::vector<std::unique_ptr<ResponseFilter>> filters;
    // location_streams_body[i]: a handler of location i streams request
    // bodies, so the location is served as soon as the head is in.
    std::vector<bool> location_streams_body;

    // With a [tls] section: the certificates, where plaintext is staged and
    // records gathered before a write (see OutputQueue::flush and
    // tls/tls_stream.hpp), and where redirect_http sends clients.
    void use_tls(const tls::ServerTls& loaded, uint16_t port);
    void set_large_send_buffer(uint64_t wanted);
    const tls::ServerTls* tls = nullptr;
    std::unique_ptr<char[]> tls_staging;
    std::unique_ptr<tls::WriteGather> tls_gather;
    static constexpr size_t tls_staging_size = 64 * 1024;
    uint16_t https_port = 443;
    // large_send_buffer as set on a socket (0: not used, see
    // set_large_send_buffer), and autotuning's maximum: the bytes pending
    // and the buffer a socket must have reached first.
    int large_send_buffer = 0;
    uint64_t large_send_buffer_from = 0;
    bool redirect_http = false;

    // Set when the worker drains: connections finish what they are doing,
    // say "Connection: close", and idle ones close.
    bool draining = false;
    // Every open connection, so a drain can reach the idle ones.
    ClientConnection* connections = nullptr;
    size_t connection_count = 0;
    // Called after a connection is freed (the worker resumes accepting, or
    // exits when draining and none is left).
    std::function<void()> on_connection_closed;
};

}  // namespace portico::http
