#include "proxy/upstream_connection.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "proxy/upstream.hpp"

namespace portico::proxy {

UpstreamConnection* UpstreamConnection::open(uv_loop_t* loop, UpstreamServer& server, int& error) {
    const config::SocketAddress& address = *server.address;
    int fd = ::socket(address.storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        error = errno;
        return nullptr;
    }
    int on = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    int result = ::connect(fd, reinterpret_cast<const sockaddr*>(&address.storage), address.length);
    if (result != 0 && errno != EINPROGRESS) {
        error = errno;
        ::close(fd);
        return nullptr;
    }
    auto* connection = new UpstreamConnection(loop, server, fd);
    connection->connected = result == 0;
    return connection;
}

UpstreamConnection::UpstreamConnection(uv_loop_t* loop, UpstreamServer& server, int fd)
    : server_(server), fd_(fd) {
    uv_poll_init(loop, &poll_, fd);
    timer_.init(loop, this, on_timer);
    poll_.data = this;
    ++server_.open_connections;
}

UpstreamConnection::~UpstreamConnection() {
    ::close(fd_);
    --server_.open_connections;
}

int UpstreamConnection::finish_connect() {
    int error = 0;
    socklen_t length = sizeof error;
    if (::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &error, &length) != 0) error = errno;
    connected = error == 0;
    return error;
}

void UpstreamConnection::watch(Owner* owner, int events) {
    owner_ = owner;
    if (closing_ || events == events_) return;
    events_ = events;
    if (events == 0) uv_poll_stop(&poll_);
    else uv_poll_start(&poll_, events, on_poll);
}

void UpstreamConnection::arm_timer(uint64_t timeout_ms) {
    if (!closing_) timer_.arm(timeout_ms);
}

void UpstreamConnection::stop_timer() {
    if (!closing_) timer_.disarm();
}

void UpstreamConnection::close() {
    if (closing_) return;
    closing_ = true;
    owner_ = nullptr;
    uv_close(reinterpret_cast<uv_handle_t*>(&poll_), on_closed);
    uv_close(timer_.handle(), on_closed);
}

void UpstreamConnection::on_poll(uv_poll_t* handle, int status, int events) {
    auto* connection = static_cast<UpstreamConnection*>(handle->data);
    if (connection->owner_) connection->owner_->on_upstream_event(*connection, status, events);
}

void UpstreamConnection::on_timer(void* owner) {
    auto* connection = static_cast<UpstreamConnection*>(owner);
    if (connection->owner_) connection->owner_->on_upstream_timeout(*connection);
}

void UpstreamConnection::on_closed(uv_handle_t* handle) {
    auto* connection = static_cast<UpstreamConnection*>(handle->data);
    if (--connection->open_handles_ == 0) delete connection;
}

}  // namespace portico::proxy
