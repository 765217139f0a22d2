#include "http/server_context.hpp"

#include <algorithm>

#include "compress/compression_filter.hpp"
#include "http/respond_handler.hpp"
#include "proxy/proxy_handler.hpp"
#include "static/static_handler.hpp"

namespace portico::http {

namespace {

// Each location's handlers, in the order they are tried. The static and
// proxy handlers join here as they land: "root then proxy" is the file if it
// exists, else the upstream.
std::vector<std::unique_ptr<Handler>> handlers_for(const config::LocationConfig& location,
                                                   ServerContext& server) {
    std::vector<std::unique_ptr<Handler>> handlers;
    if (location.respond) handlers.push_back(std::make_unique<RespondHandler>(*location.respond));
    if (location.root)
        handlers.push_back(std::make_unique<staticfiles::StaticHandler>(location, server.file_cache,
                                                                        server.mime));
    if (location.upstream)
        handlers.push_back(std::make_unique<proxy::ProxyHandler>(
            *server.upstreams[*location.upstream], server.buffers, server.upstream_buffers,
            server.poller));
    return handlers;
}

// Input buffers hold a whole request head, with room to spare for body reads.
size_t buffer_size_for(const config::ServerConfig& server) {
    return std::max<size_t>(server.max_header_bytes + 1, 16 * 1024);
}

}  // namespace

ServerContext::ServerContext(uv_loop_t* loop, const config::Config& config,
                             metrics::WorkerCounters counters, unsigned worker_index)
    : loop(loop),
      poller(loop),
      config(config),
      counters(std::move(counters)),
      access_log(config.log),
      worker_index(worker_index),
      router(config.locations),
      buffers(buffer_size_for(config.server)),
      mime(config.mime),
      file_cache(poller) {
    for (const config::UpstreamConfig& upstream : config.upstreams)
        upstreams.push_back(std::make_unique<proxy::Upstream>(poller, upstream, upstreams.size(),
                                                              this->counters));
    for (const config::LocationConfig& location : config.locations) {
        handlers.push_back(handlers_for(location, *this));
        // A compressing stream's output block is an upstream read's size:
        // one chunk per 64 KiB of compressed bytes at most.
        filters.push_back(location.compress ? std::make_unique<compress::CompressionFilter>(
                                                  *location.compress, compressed_cache,
                                                  upstream_buffers, encoder_memory, this->counters)
                                            : nullptr);
        location_streams_body.push_back(std::any_of(
            handlers.back().begin(), handlers.back().end(),
            [](const std::unique_ptr<Handler>& handler) { return handler->streams_request_body(); }));
    }
}

void ServerContext::use_tls(const tls::ServerTls& loaded, uint16_t port) {
    tls = &loaded;
    tls_staging = std::make_unique<char[]>(tls_staging_size);
    tls_gather = std::make_unique<tls::WriteGather>();
    https_port = port;
    redirect_http = config.tls->redirect_http;
}

}  // namespace portico::http
