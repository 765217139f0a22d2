// One HTTP/2 client connection: its transport (a client socket, plain for
// h2c or TLS after ALPN chose h2), an input buffer, and the Session that
// does the protocol. The session's frames wait in its own output queue,
// which this connection writes through the transport (Carrier::write), so
// h2 output goes out with the same writev/sendfile/TLS code as HTTP/1.1.
#pragma once

#include <memory>

#include "http/client_socket.hpp"
#include "http2/session.hpp"

namespace portico::http2 {

class Connection final : public http::ClientSocket, private Carrier {
public:
    // Takes over a client's transport once HTTP/2 was chosen for it
    // (worker/protocol_choice.hpp), with the bytes read already: `input`,
    // a block of the worker's buffer pool holding `filled` bytes (the
    // preface, or part of it), or nullptr.
    static void start(http::ServerContext& server, std::unique_ptr<transport::Transport> transport,
                      const http::PeerAddress& peer, char* input, size_t filled);

    // http::OpenConnection: GOAWAY; the streams already open finish.
    void announce_drain() override { session_.drain(); }
    void close_if_idle() override {}

private:
    Connection(http::ServerContext& server, std::unique_ptr<transport::Transport> transport,
               const http::PeerAddress& peer);
    ~Connection() override;

    friend class http::ClientSocket;  // on_socket_event
    static void on_timer(void* connection);
    bool closed() const { return closed_; }
    void on_writable() { session_.on_writable(); }
    void on_readable();
    void receive_input();
    void update_poll();
    void close();

    // Carrier
    transport::OutputQueue::FlushResult write(transport::OutputQueue& output,
                                              uint64_t& sent) override {
        return transport_->write(output, sent);
    }
    void set_output_blocked(bool blocked) override;
    void arm_timer(config::Duration timeout) override { arm(timeout); }
    void disarm_timer() override { timer_.disarm(); }
    void end_session() override { close(); }
    const http::PeerAddress& peer() const override { return peer_; }
    const transport::Transport& transport() const override { return *transport_; }

    size_t input_capacity() const { return server_.buffers.block_size(); }

    Session session_;
    // What was read and not yet handed to the session (one read's worth,
    // several TLS records); from the worker's pool, none between reads.
    char* input_ = nullptr;
    size_t input_filled_ = 0;
    bool peer_closed_ = false;
    bool output_blocked_ = false;
    bool closed_ = false;
};

}  // namespace portico::http2
