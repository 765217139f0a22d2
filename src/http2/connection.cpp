#include "http2/connection.hpp"

#include <cerrno>

#include "core/log.hpp"

namespace portico::http2 {

void Connection::start(http::ServerContext& server, std::unique_ptr<transport::Transport> transport,
                       const http::PeerAddress& peer, char* input, size_t filled) {
    auto* connection = new Connection(server, std::move(transport), peer);
    if (server.draining) connection->session_.drain();
    if (input != nullptr) {
        connection->input_ = input;
        connection->input_filled_ = filled;
        connection->receive_input();
    } else {
        // ALPN chose h2: our SETTINGS go with the answer to the client's
        // first frames (in the same write), or now if they are not in yet.
        connection->on_readable();
    }
    if (connection->closed_) return;
    connection->update_poll();
    if (connection->transport_->send_held() == transport::Transport::Step::failed)
        connection->close();
}

Connection::Connection(http::ServerContext& server, std::unique_ptr<transport::Transport> transport,
                       const http::PeerAddress& peer)
    : ClientSocket(server, std::move(transport), peer, this, on_socket_event<Connection>, on_timer),
      session_(server, static_cast<Carrier&>(*this)) {}

Connection::~Connection() { server_.buffers.release(input_); }

void Connection::close() {
    if (std::exchange(closed_, true)) return;
    session_.connection_closed();
    end(peer_closed_);
}

void Connection::on_timer(void* self) { static_cast<Connection*>(self)->session_.on_timeout(); }

void Connection::on_readable() {
    if (input_ == nullptr) input_ = server_.buffers.acquire();
    ssize_t received = transport_->read(input_ + input_filled_, input_capacity() - input_filled_);
    if (received < 0) {
        if (errno != EAGAIN && errno != EINTR) {
            log::debug("connection from a client ends: {}", transport_->failure());
            close();
            return;
        }
        // A session whose client's preface is not in yet still sends its
        // own SETTINGS now.
        session_.send();
        if (!closed_) update_poll();
        return;
    }
    if (received == 0) {
        peer_closed_ = true;
        close();
        return;
    }
    input_filled_ += static_cast<size_t>(received);
    // OpenSSL hands out one record per read: the frames of the records
    // already in go together (a client's SETTINGS and its first HEADERS),
    // so their answers share one write.
    while (transport_->has_buffered_input() && input_filled_ < input_capacity()) {
        ssize_t more = transport_->read(input_ + input_filled_, input_capacity() - input_filled_);
        if (more <= 0) break;  // the next event sees an error or the end again
        input_filled_ += static_cast<size_t>(more);
    }
    receive_input();
}

void Connection::receive_input() {
    size_t filled = std::exchange(input_filled_, 0);
    session_.receive(input_, filled);
    if (!closed_) update_poll();
}

void Connection::update_poll() {
    int events = peer_closed_ ? 0 : core::io_readable;
    if (output_blocked_) events |= core::io_writable;
    if (!watch(events, output_blocked_)) close();
}

void Connection::set_output_blocked(bool blocked) {
    output_blocked_ = blocked;
    update_poll();
}

}  // namespace portico::http2
