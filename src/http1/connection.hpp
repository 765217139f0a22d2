// One HTTP/1.x client connection: its socket, the request parser, the output queue,
// one timer, and the state machine that ties them together.
//
// Socket I/O design (settled here for every handler): the worker's IoPoller
// tells when the socket is ready (core/io_poller.hpp says why not a uv_poll_t
// per socket), and reads, writev(2) and sendfile(2) are our own system calls
// on the non-blocking descriptor. libuv's uv_tcp_t cannot send a file (its
// uv_fs_sendfile runs on the thread pool and fails with EAGAIN on a
// non-blocking socket). It also gives precise back-pressure: we ask for
// readability only while we have room to read into, and for writability
// only while the output queue is blocked. Level-triggered epoll underneath
// means nothing is lost when we stop reading for a while.
//
// It reads and writes through its transport (transport/transport.hpp): the
// socket itself, or TLS over it, whose handshake ran before HTTP/1.x was
// chosen (worker/protocol_choice.hpp); nothing here knows which.
#pragma once

#include <uv.h>

#include <cstdint>
#include <memory>

#include "core/io_poller.hpp"
#include "core/lazy_timer.hpp"
#include "http/exchange.hpp"
#include "http/request_state.hpp"
#include "http/server_context.hpp"
#include "http1/request_parser.hpp"
#include "http/client_socket.hpp"
#include "http1/codec_state.hpp"
#include "transport/output_queue.hpp"
#include "transport/transport.hpp"

namespace portico::http1 {

class ClientConnection final : public http::ServedExchange,
                               public http::ClientSocket,
                               private RequestParser::BodyReceiver {
public:
    // Takes over a client's transport (its non-blocking socket, plain or
    // TLS, past the handshake) once HTTP/1.x was chosen for it
    // (worker/protocol_choice.hpp), with the bytes read already: `input`,
    // a block of the worker's buffer pool holding `filled` bytes, or
    // nullptr (nothing read yet).
    static void start(http::ServerContext& server, std::unique_ptr<transport::Transport> transport,
                      const http::PeerAddress& peer, char* input, size_t filled);

    // http::OpenConnection (worker drain): HTTP/1.1 says "Connection:
    // close" on its next response (ServerContext::draining).
    void announce_drain() override {}
    void close_if_idle() override;

    // Exchange
    const http::Request& request() const override;
    const config::LocationConfig& location() const override;
    void begin_response(int status, uint64_t content_length) override;
    void begin_streamed_response(int status) override;
    void add_header(std::string_view name, std::string_view value) override;
    void send_body(std::string_view bytes) override;
    void send_body_pieces(std::span<const std::string_view> pieces, bool last) override;
    void send_owned_body(std::string_view bytes, std::shared_ptr<const void> owner) override;
    void send_file(int fd, off_t offset, uint64_t length,
                   std::shared_ptr<const void> owner) override;
    void hand_over_buffer(core::BufferPool& pool, char* block) override;
    void end_response() override;
    void abort() override;
    void resume_request_body() override;
    bool output_pending() const override { return !r_->output.empty(); }
    void switch_protocols() override;

private:
    enum class State {
        idle,          // between requests; nothing of the next one has arrived
        reading_head,  // part of a request head is in
        active,        // head complete: a handler answers, the body may still arrive
        lingering,     // answered and closing: discard input so the answer is not reset
        tunnel,        // after a 101: raw bytes both ways
        closed,
    };

    ClientConnection(http::ServerContext& server, std::unique_ptr<transport::Transport> transport,
                     const http::PeerAddress& peer);
    ~ClientConnection() override;

    friend class http::ClientSocket;  // on_socket_event
    static void on_timer(void* connection);
    bool closed() const { return state_ == State::closed; }

    void on_readable();
    // `received` more bytes are in the input buffer.
    void on_input(size_t received);
    void on_writable();
    void on_timeout();
    void process_input();
    void parse_available_input();
    void on_head_complete();
    void on_tunnel_input();
    void serve();
    void finish_request();
    void fail(int status, const char* reason);
    void on_response_complete();
    // Writes what is queued. `from_socket_event`: the socket became
    // writable; only then does a listener waiting for its output hear that
    // it drained (from inside its own send it would be re-entered).
    void flush_output(bool from_socket_event = false);
    void set_cork(bool on) { corked_ = transport_->set_cork(on); }
    void close_after_output();
    void close();

    bool on_request_body(std::string_view chunk) override;

    void update_poll();
    bool keep_alive_after_response() const;
    void start_head(int status);
    void commit_head();
    void answer_head_overflow();
    // The response was ended (or replaced by a 502) or the connection closed:
    // a handler's further output is dropped.
    bool response_closed() const;
    // Queues `pieces` as one chunk of a chunked response; `last`: the
    // last-chunk after it.
    void queue_chunk(std::span<const std::string_view> pieces, bool last);
    void record_request(int status);
    void record_request_cut_short();
    void begin_request();
    void release_request_state();
    void release_idle_buffer();
    size_t input_capacity() const { return server_.buffers.block_size(); }

    State state_ = State::idle;

    // Input: requests are parsed in place. The current request's head starts
    // at offset 0; body bytes are read after it and dropped once passed on.
    char* input_ = nullptr;  // from the worker's pool; none while idle
    size_t input_filled_ = 0;
    size_t input_parsed_ = 0;
    bool peer_closed_ = false;
    bool parsing_ = false;  // inside process_input(), which goes on by itself
    // After a parse error or a timeout nothing more is parsed; what arrives
    // is read and dropped until the answer is out.
    bool discard_input_ = false;
    bool linger_on_close_ = false;
    bool output_blocked_ = false;
    bool send_buffer_raised_ = false;  // large_send_buffer set on the socket
    bool corked_ = false;              // TCP_CORK on for this response (tcp_nopush)
    bool close_after_response_ = false;
    uint64_t bytes_sent_ = 0;

    // The request in progress, from its first byte to its last response
    // byte; nullptr while the connection is idle.
    CodecState* r_ = nullptr;
    uint32_t requests_served_ = 0;
    // Responses completed on this connection: a flush that called a
    // listener checks whether the listener's own flush completed it.
    uint32_t responses_completed_ = 0;
};

}  // namespace portico::http1
