#include "http/server_context.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "compress/compression_filter.hpp"
#include "core/log.hpp"
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

// The last number in a /proc/sys file (tcp_wmem holds min, default, max);
// 0 when it cannot be read.
uint64_t last_sysctl_number(const char* path) {
    std::ifstream in(path);
    uint64_t number = 0;
    for (uint64_t next; in >> next;) number = next;
    return number;
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
    set_large_send_buffer(config.server.large_send_buffer);
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

// A socket's send buffer grows by itself (autotuning) up to tcp_wmem's
// maximum, 4 MiB by default. SO_SNDBUF locks it at the value asked, capped
// at net.core.wmem_max (208 KiB by default, which would shrink it) and
// doubled. So the option is used only where the kernel grants more than
// autotuning reaches; what it grants is read back from a socket of our
// own, since wmem_max is not readable in every container. Every worker
// comes to the same answer, so only the first one says why it is unused.
void ServerContext::set_large_send_buffer(uint64_t wanted) {
    uint64_t autotuned = last_sysctl_number("/proc/sys/net/ipv4/tcp_wmem");
    if (wanted == 0 || autotuned == 0) return;
    int asked = static_cast<int>(wanted);  // at most 1 GiB (config)
    int granted = 0;
    socklen_t length = sizeof granted;
    int probe = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    bool read_back = probe >= 0 &&
                     ::setsockopt(probe, SOL_SOCKET, SO_SNDBUF, &asked, sizeof asked) == 0 &&
                     ::getsockopt(probe, SOL_SOCKET, SO_SNDBUF, &granted, &length) == 0;
    int probe_error = errno;
    if (probe >= 0) ::close(probe);
    bool first_worker = worker_index == 0;
    if (!read_back) {
        if (first_worker)
            log::warn("large_send_buffer not used: could not ask the kernel what it grants ({})",
                      std::strerror(probe_error));
        return;
    }
    if (static_cast<uint64_t>(granted) <= autotuned) {
        if (first_worker)
            log::warn(
                "large_send_buffer not used: the kernel grants {} bytes for it, no more "
                "than autotuning's {} (raise net.core.wmem_max to use it)",
                granted, autotuned);
        return;
    }
    large_send_buffer = asked;
    large_send_buffer_from = autotuned;
}

void ServerContext::use_tls(const tls::ServerTls& loaded, uint16_t port) {
    tls = &loaded;
    tls_staging = std::make_unique<char[]>(tls_staging_size);
    tls_gather = std::make_unique<tls::WriteGather>();
    https_port = port;
    redirect_http = config.tls->redirect_http;
}

}  // namespace portico::http
