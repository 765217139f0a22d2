// What every client connection has, whichever protocol it speaks: its
// transport (plain socket or TLS), the transport's poll registration, one
// timer, and its place in the worker's list; and the one way it ends. The
// protocol choice (worker/protocol_choice.*), the HTTP/1.x connection and
// the HTTP/2 connection are each one; the choice hands the transport to
// the protocol it picked.
#pragma once

#include <memory>

#include "core/io_poller.hpp"
#include "core/lazy_timer.hpp"
#include "http/peer_address.hpp"
#include "http/server_context.hpp"
#include "transport/transport.hpp"

namespace portico::http {

class ClientSocket : public OpenConnection {
public:
    ClientSocket(const ClientSocket&) = delete;
    ClientSocket& operator=(const ClientSocket&) = delete;

    const PeerAddress& client_peer() const { return peer_; }

protected:
    // `owner`, the connection itself (as its own type), is what `on_io`
    // and `on_timer` are called with.
    ClientSocket(ServerContext& server, std::unique_ptr<transport::Transport> transport,
                 const PeerAddress& peer, void* owner, core::IoWatcher::Callback on_io,
                 core::LazyTimer::Callback on_timer);
    virtual ~ClientSocket() = default;

    // The watcher's callback for a connection of type C: a socket event
    // goes through the transport first (its own pending output: TLS records
    // the socket did not take), then what is left to the connection's
    // on_writable and on_readable. C makes ClientSocket a friend and has
    // output_blocked_, update_poll(), close() and closed().
    template <typename C>
    static void on_socket_event(void* self, int events) {
        auto* connection = static_cast<C*>(self);
        transport::Transport::Ready ready =
            connection->transport_->on_socket_event(events, connection->output_blocked_);
        if (ready.failed) [[unlikely]] {
            connection->close();
            return;
        }
        if (ready.repoll) connection->update_poll();
        if (ready.events & core::io_writable) connection->on_writable();
        if ((ready.events & core::io_readable) && !connection->closed()) connection->on_readable();
    }

    // Watches what the connection wants (core::io_readable/io_writable;
    // `output_blocked`: its output waits) and what its transport adds.
    // False after epoll refused: the caller closes.
    bool watch(int events, bool output_blocked);
    void arm(config::Duration timeout) { timer_.arm(static_cast<uint64_t>(timeout.count())); }
    // Out of the list, the epoll set and the timer; the transport closed
    // (or handed over: then nullptr); `this` freed after the loop's turn,
    // whose other events may still name it.
    void end(bool peer_closed);
    bool ended() const { return ended_; }
    // The transport goes to the connection that takes over; this one ends.
    std::unique_ptr<transport::Transport> hand_over();

    ServerContext& server_;
    std::unique_ptr<transport::Transport> transport_;
    PeerAddress peer_;
    core::IoWatcher io_;
    core::LazyTimer timer_;

private:
    static void release(void* closed);
    bool ended_ = false;
};

}  // namespace portico::http
