#include "http/client_socket.hpp"

#include <cerrno>
#include <cstring>

#include "core/log.hpp"

namespace portico::http {

ClientSocket::ClientSocket(ServerContext& server, std::unique_ptr<transport::Transport> transport,
                           const PeerAddress& peer, void* owner,
                           core::IoWatcher::Callback on_io, core::LazyTimer::Callback on_timer)
    : server_(server), transport_(std::move(transport)), peer_(peer) {
    io_.init(server.poller, transport_->fd(), owner, on_io);
    timer_.init(server.poller, owner, on_timer);
    server.add_connection(*this);
}

bool ClientSocket::watch(int events, bool output_blocked) {
    if (io_.watch(transport_->poll_events(events, output_blocked, io_))) return true;
    log::error(
        "epoll_ctl on a client socket: {}; closing the connection (raise "
        "fs.epoll.max_user_watches or lower max_connections)",
        std::strerror(errno));
    return false;
}

void ClientSocket::end(bool peer_closed) {
    if (std::exchange(ended_, true)) return;
    server_.remove_connection(*this);
    io_.forget();
    timer_.cancel();
    if (transport_) {
        server_.counters.connection_closed();
        transport_->close(peer_closed);
    }
    server_.poller.release_after_turn(this, release);
}

std::unique_ptr<transport::Transport> ClientSocket::hand_over() {
    // Out of the epoll set: the descriptor stays open, and the connection
    // that takes over registers its own watcher (one epoll_ctl each way, once
    // per TLS or h2c connection).
    io_.watch(0);
    std::unique_ptr<transport::Transport> transport = std::move(transport_);
    end(false);
    return transport;
}

void ClientSocket::release(void* closed) {
    auto* socket = static_cast<ClientSocket*>(closed);
    ServerContext& server = socket->server_;
    bool closed_for_good = socket->transport_ != nullptr;
    delete socket;
    // A hand-over leaves the connection count as it was.
    if (closed_for_good && server.on_connection_closed) server.on_connection_closed();
}

}  // namespace portico::http
