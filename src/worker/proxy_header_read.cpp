#include "worker/proxy_header_read.hpp"

#include <sys/socket.h>

#include <cerrno>

#include "core/log.hpp"
#include "core/log_throttle.hpp"
#include "http/proxy_protocol.hpp"
#include "worker/protocol_choice.hpp"

namespace portico::worker {

void ProxyHeaderRead::start(http::ServerContext& server,
                            std::unique_ptr<transport::Transport> transport,
                            const http::PeerAddress& peer) {
    auto* reading = new ProxyHeaderRead(server, std::move(transport), peer);
    reading->arm(server.config.server.header_timeout);
    // The listening socket defers accepts until data arrives
    // (TCP_DEFER_ACCEPT): read at once.
    reading->read();
}

ProxyHeaderRead::ProxyHeaderRead(http::ServerContext& server,
                                 std::unique_ptr<transport::Transport> transport,
                                 const http::PeerAddress& peer)
    : ClientSocket(server, std::move(transport), peer, this, on_io, on_timer) {}

ProxyHeaderRead::~ProxyHeaderRead() {
    server_.buffers.release(header_);
}

void ProxyHeaderRead::on_io(void* self, int) {
    static_cast<ProxyHeaderRead*>(self)->read();
}

void ProxyHeaderRead::on_timer(void* self) {
    static_cast<ProxyHeaderRead*>(self)->fail(metrics::ProxyProtocolError::timeout,
                                              "no complete header within header_timeout");
}

void ProxyHeaderRead::read() {
    if (closed_) return;
    if (header_ == nullptr) header_ = server_.buffers.acquire();
    size_t capacity = server_.buffers.block_size();
    int fd = transport_->fd();
    // Peeked, then only the header's own bytes taken. What is taken is never
    // less than what was peeked while the header is incomplete, so the
    // socket is not left readable with nothing new (level-triggered epoll).
    ssize_t peeked = ::recv(fd, header_ + filled_, capacity - filled_, MSG_PEEK);
    if (peeked < 0 && (errno == EAGAIN || errno == EINTR)) {
        if (!io_.watch(core::io_readable)) close();
        return;
    }
    if (peeked <= 0) {
        // A balancer's TCP health check connects and closes: not an error.
        if (filled_ == 0)
            close();
        else
            fail(metrics::ProxyProtocolError::truncated, "the client closed inside the header");
        return;
    }
    http::ProxyHeader header =
        http::parse_proxy_header({header_, filled_ + static_cast<size_t>(peeked)}, capacity);
    if (header.status == http::ProxyHeader::Status::invalid) {
        fail(metrics::ProxyProtocolError::invalid, header.problem);
        return;
    }
    bool complete = header.status == http::ProxyHeader::Status::complete;
    size_t take = complete ? header.length - filled_ : static_cast<size_t>(peeked);
    // Those bytes are in the socket's buffer already: one read takes them all.
    if (::recv(fd, header_ + filled_, take, 0) != static_cast<ssize_t>(take)) {
        close();
        return;
    }
    filled_ += take;
    if (!complete) {
        if (!io_.watch(core::io_readable)) close();
        return;
    }
    http::PeerAddress peer = header.has_source ? header.source : peer_;
    http::ServerContext& server = server_;
    std::unique_ptr<transport::Transport> transport = hand_over();
    ProtocolChoice::start(server, std::move(transport), peer);
}

void ProxyHeaderRead::fail(metrics::ProxyProtocolError reason, std::string_view problem) {
    server_.counters.proxy_protocol_failed(reason);
    // A misconfigured balancer (or a client that found the port) fails every
    // connection: once a second, with the count.
    static core::LogThrottle throttle;
    uint64_t left_out = 0;
    if (throttle.allow(uv_now(server_.loop), left_out)) {
        char ip[INET6_ADDRSTRLEN];
        log::warn(
            "closed a connection from {} to a proxy_protocol listener: {} ({} more since the "
            "last line); is the balancer set to send the PROXY protocol?",
            http::format_ip(peer_, ip, sizeof ip), problem, left_out);
    }
    close();
}

void ProxyHeaderRead::close() {
    if (std::exchange(closed_, true)) return;
    end(false);
}

}  // namespace portico::worker
