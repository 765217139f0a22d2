#include "worker/protocol_choice.hpp"

#include <cerrno>
#include <string_view>

#include "core/log.hpp"
#include "http1/connection.hpp"
#include "http2/connection.hpp"

namespace portico::worker {

namespace {

// RFC 9113 3.4: what an h2c client with prior knowledge sends first.
constexpr std::string_view h2_preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
// No HTTP/1.x method starts with "PRI", so three bytes tell.
constexpr size_t bytes_that_tell = 3;

// How long the rest of a refused request is read and dropped.
constexpr config::Duration linger_timeout{2000};

bool begins_with_h2_preface(std::string_view first) {
    return first.size() >= bytes_that_tell && h2_preface.starts_with(first.substr(0, h2_preface.size()));
}

}  // namespace

void ProtocolChoice::start(http::ServerContext& server,
                           std::unique_ptr<transport::Transport> transport,
                           const http::PeerAddress& peer) {
    if (transport->established() && !server.config.http2.cleartext) {
        http1::ClientConnection::start(server, std::move(transport), peer, nullptr, 0);
        return;
    }
    bool tls = !transport->established();
    auto* choice = new ProtocolChoice(server, std::move(transport), peer);
    choice->arm(tls ? server.config.tls->handshake_timeout : server.config.server.header_timeout);
    // The listening socket defers accepts until data arrives
    // (TCP_DEFER_ACCEPT): go on at once.
    choice->step();
}

ProtocolChoice::ProtocolChoice(http::ServerContext& server,
                               std::unique_ptr<transport::Transport> transport,
                               const http::PeerAddress& peer)
    : ClientSocket(server, std::move(transport), peer, this, on_io, on_timer) {}

ProtocolChoice::~ProtocolChoice() { server_.buffers.release(input_); }

void ProtocolChoice::on_io(void* self, int events) {
    auto* choice = static_cast<ProtocolChoice*>(self);
    transport::Transport::Ready ready = choice->transport_->on_socket_event(events, false);
    if (ready.failed) {
        choice->close();
        return;
    }
    choice->step();
}

void ProtocolChoice::step() {
    if (lingering_) {
        linger();
        return;
    }
    if (!transport_->established() && !finish_handshake()) return;
    if (!transport_->secure() && !read_first_bytes()) return;
    choose();
}

// True once the handshake is done; otherwise it waits, lingers or closed.
bool ProtocolChoice::finish_handshake() {
    switch (transport_->handshake()) {
    case transport::Transport::Step::done:
        arm(server_.config.server.header_timeout);
        return true;
    case transport::Transport::Step::blocked:
        update_poll();
        return false;
    case transport::Transport::Step::refused:
        lingering_ = true;
        arm(linger_timeout);
        update_poll();
        return false;
    case transport::Transport::Step::failed:
        break;
    }
    // An internet-facing port sees failed handshakes all day: debug only.
    char ip[INET6_ADDRSTRLEN];
    log::debug("TLS handshake with {} failed: {}", http::format_ip(peer_, ip, sizeof ip),
               transport_->failure());
    close();
    return false;
}

bool ProtocolChoice::read_first_bytes() {
    if (input_ == nullptr) input_ = server_.buffers.acquire();
    ssize_t received = transport_->read(input_ + filled_, server_.buffers.block_size() - filled_);
    if (received < 0 && (errno == EAGAIN || errno == EINTR)) {
        update_poll();
        return false;
    }
    if (received <= 0) {
        peer_closed_ = received == 0;
        close();
        return false;
    }
    filled_ += static_cast<size_t>(received);
    std::string_view first(input_, filled_);
    if (first.size() < bytes_that_tell && h2_preface.starts_with(first)) {
        update_poll();
        return false;
    }
    return true;
}

void ProtocolChoice::linger() {
    char discard[4096];
    ssize_t received;
    while ((received = transport_->read(discard, sizeof discard)) > 0) {
    }
    if (received == 0 || (errno != EAGAIN && errno != EINTR)) {
        peer_closed_ = received == 0;
        close();
        return;
    }
    update_poll();
}

void ProtocolChoice::choose() {
    bool h2 = transport_->secure() ? transport_->negotiated_h2()
                                   : begins_with_h2_preface({input_, filled_});
    char* input = std::exchange(input_, nullptr);
    size_t filled = filled_;
    http::ServerContext& server = server_;
    http::PeerAddress peer = peer_;
    std::unique_ptr<transport::Transport> transport = hand_over();
    if (h2) http2::Connection::start(server, std::move(transport), peer, input, filled);
    else http1::ClientConnection::start(server, std::move(transport), peer, input, filled);
}

void ProtocolChoice::update_poll() {
    if (!watch(core::io_readable, false)) close();
}

void ProtocolChoice::close() {
    if (std::exchange(closed_, true)) return;
    end(peer_closed_);
}

}  // namespace portico::worker
