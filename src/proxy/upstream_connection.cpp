#include "proxy/upstream_connection.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "proxy/upstream.hpp"

namespace portico::proxy {

UpstreamConnection* UpstreamConnection::open(core::IoPoller& poller, UpstreamServer& server,
                                             int& error) {
    bool unix_socket = server.on_unix_socket();
    const sockaddr* address = unix_socket
                                  ? reinterpret_cast<const sockaddr*>(&server.entry->storage)
                                  : &server.address.any;
    socklen_t length = unix_socket ? server.entry->length : http::address_length(server.address);
    int fd = ::socket(address->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        error = errno;
        return nullptr;
    }
    int on = 1;
    if (!unix_socket) ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    // A Unix socket's connect completes at once, or fails (EAGAIN: the
    // listener's backlog is full), which counts as a refused TCP connect.
    int result = ::connect(fd, address, length);
    if (result != 0 && errno != EINPROGRESS) {
        error = errno;
        ::close(fd);
        return nullptr;
    }
    auto* connection = new UpstreamConnection(poller, server, fd);
    connection->connected = result == 0;
    if (server.tls) {
        connection->tls_ =
            tls::UpstreamSession::open(*server.tls, fd, server.tls_name, server.session);
        if (!connection->tls_) {
            connection->close();
            error = ENOMEM;
            return nullptr;
        }
    }
    return connection;
}

UpstreamConnection::UpstreamConnection(core::IoPoller& poller, UpstreamServer& server, int fd)
    : server_(server), fd_(fd) {
    io_.init(poller, fd, this, on_io);
    timer_.init(poller, this, on_timer);
    ++server_.open_connections;
}

UpstreamConnection::~UpstreamConnection() = default;

int UpstreamConnection::finish_connect() {
    int error = 0;
    socklen_t length = sizeof error;
    if (::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &error, &length) != 0) error = errno;
    connected = error == 0;
    return error;
}

bool UpstreamConnection::watch(Owner* owner, int events) {
    owner_ = owner;
    if (tls_) [[unlikely]]
        return watch_secure(events);
    return closing_ || io_.watch(events);
}

// Apart, so a cleartext connection's watch stays as small as it was.
bool UpstreamConnection::watch_secure(int events) {
    if (closing_) return true;
    // What OpenSSL read ahead is not the socket's to report.
    if ((events & core::io_readable) && tls_->has_buffered_input())
        io_.report_soon(core::io_readable);
    return io_.watch(events);
}

void UpstreamConnection::acknowledge_now() {
    if (server_.on_unix_socket()) return;  // no ACKs to delay
    int on = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_QUICKACK, &on, sizeof on);
}

void UpstreamConnection::arm_timer(uint64_t timeout_ms) {
    timer_.arm(timeout_ms);  // a no-op once close() cancelled it
}

void UpstreamConnection::stop_timer() {
    timer_.disarm();
}

void UpstreamConnection::close() {
    if (closing_) return;
    closing_ = true;
    --server_.open_connections;  // now, not at the deferred delete: it frees a slot
    owner_ = nullptr;
    io_.forget();
    if (tls_) tls_->shutdown();
    ::close(fd_);
    timer_.cancel();
    io_.poller().release_after_turn(this, release);
}

void UpstreamConnection::on_io(void* self, int events) {
    auto* connection = static_cast<UpstreamConnection*>(self);
    if (connection->owner_) connection->owner_->on_upstream_event(*connection, events);
}

void UpstreamConnection::on_timer(void* owner) {
    auto* connection = static_cast<UpstreamConnection*>(owner);
    if (connection->owner_) connection->owner_->on_upstream_timeout(*connection);
}

void UpstreamConnection::release(void* closed) { delete static_cast<UpstreamConnection*>(closed); }

}  // namespace portico::proxy
