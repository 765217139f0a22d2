#include "http1/connection.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/log.hpp"
#include "http/request_routing.hpp"
#include "http/status.hpp"

namespace portico::http1 {

namespace {

constexpr std::string_view continue_response = "HTTP/1.1 100 Continue\r\n\r\n";

// After an error answer, how long input is still read and dropped so the
// client's unread bytes do not turn our close into a reset that destroys the
// answer before the client reads it (nginx's lingering close).
constexpr config::Duration linger_timeout{2000};

}  // namespace

// ---- life cycle ----------------------------------------------------------

void ClientConnection::start(http::ServerContext& server,
                             std::unique_ptr<transport::Transport> transport,
                             const http::PeerAddress& peer, char* input, size_t filled) {
    auto* connection = new ClientConnection(server, std::move(transport), peer);
    // The first head must arrive within header_timeout of the accept (or of
    // the handshake's end).
    connection->arm(server.config.server.header_timeout);
    // The listening socket defers accepts until data arrives
    // (TCP_DEFER_ACCEPT): read at once. A connection answered and closed
    // right away then never enters the epoll set.
    if (input != nullptr) {
        connection->input_ = input;
        connection->on_input(filled);
    } else {
        connection->on_readable();
    }
    if (connection->state_ == State::closed) return;
    connection->update_poll();
    // TLS: what the handshake's end held back goes now if the first
    // response did not take it along.
    if (connection->transport_->send_held() == transport::Transport::Step::failed)
        connection->close();
}

ClientConnection::ClientConnection(http::ServerContext& server,
                                   std::unique_ptr<transport::Transport> transport,
                                   const http::PeerAddress& peer)
    : ClientSocket(server, std::move(transport), peer, this, on_socket_event<ClientConnection>,
                   on_timer) {}

ClientConnection::~ClientConnection() {
    server_.buffers.release(input_);
    release_request_state();
}

void ClientConnection::begin_request() {
    r_ = codec_state_pool().acquire(*this);
    request_state_ = r_;
    r_->start_ns = uv_hrtime();
    r_->client = peer_;
}

void ClientConnection::release_request_state() {
    if (r_ == nullptr) return;
    server_.buffers.release(r_->head_buffer);
    if (r_->handed_over_pool) r_->handed_over_pool->release(r_->handed_over_block);
    codec_state_pool().release(std::exchange(r_, nullptr));
    request_state_ = nullptr;
}

void ClientConnection::close() {
    if (state_ == State::closed) return;
    if (r_ != nullptr) record_request_cut_short();
    state_ = State::closed;
    if (r_ != nullptr) {
        r_->output.clear();
        if (http::ExchangeListener* listener = std::exchange(r_->listener, nullptr))
            listener->on_client_gone();
    }
    end(peer_closed_);
}

void ClientConnection::close_if_idle() {
    if (state_ == State::idle) close();
}

// ---- events --------------------------------------------------------------

void ClientConnection::on_timer(void* connection) {
    static_cast<ClientConnection*>(connection)->on_timeout();
}

void ClientConnection::update_poll() {
    if (state_ == State::closed) return;
    // Reading goes on while a response is written: a pipelined request waits
    // in the buffer (until it is full), a client that goes away is noticed,
    // and keeping the same events costs no epoll_ctl per request.
    bool wants_input = state_ != State::closed && !(r_ && (r_->body_held || r_->body_too_large));
    int events = 0;
    if (wants_input && !peer_closed_ && (input_ == nullptr || input_filled_ < input_capacity()))
        events |= core::io_readable;
    if (output_blocked_) events |= core::io_writable;
    if (!watch(events, output_blocked_)) close();
}

void ClientConnection::on_readable() {
    if (input_ == nullptr) input_ = server_.buffers.acquire();
    bool dropping = state_ == State::lingering || discard_input_;
    if (dropping) input_filled_ = input_parsed_ = 0;
    // A body held back by its listener may fill the buffer, unparsed; a read
    // of 0 bytes would look like the client's close. (Only a TLS event that
    // wants the other direction gets here then.)
    if (input_filled_ == input_capacity()) return;
    ssize_t received = transport_->read(input_ + input_filled_, input_capacity() - input_filled_);
    if (received < 0) {
        if (errno != EAGAIN && errno != EINTR) {
            log::debug("connection from a client ends: {}", transport_->failure());
            close();
            return;
        }
        if (state_ == State::idle) release_idle_buffer();
        // The transport may now wait for writability, or hold input (TLS).
        if (transport_->secure()) update_poll();
        return;
    }
    if (received == 0) {
        peer_closed_ = true;
        // A client may half-close after its request; what is in progress is
        // still answered, then the connection closes. Anything else is gone,
        // and so is a client whose answer comes from an upstream or a tunnel
        // (nginx's "client prematurely closed connection").
        bool answering = state_ == State::active && r_->body_complete && !discard_input_ &&
                         r_->listener == nullptr;
        if (answering) {
            close_after_response_ = true;
            update_poll();
        } else {
            close();
        }
        return;
    }
    if (dropping) return;
    on_input(static_cast<size_t>(received));
}

void ClientConnection::on_input(size_t received) {
    input_filled_ += received;
    if (state_ == State::tunnel) {
        on_tunnel_input();
        return;
    }
    if (state_ == State::idle) {
        state_ = State::reading_head;
        begin_request();
        if (requests_served_ > 0) arm(server_.config.server.header_timeout);
    } else if (state_ == State::active && !r_->body_complete) {
        arm(server_.config.server.body_timeout);
    }
    process_input();
}

void ClientConnection::on_writable() {
    flush_output(true);
}

void ClientConnection::on_timeout() {
    switch (state_) {
    case State::idle:
    case State::lingering:
        close();
        return;
    case State::tunnel:  // the proxy times the tunnel by its activity
        return;
    case State::reading_head:
        fail(408, "request head not received within header_timeout");
        return;
    case State::active:
        if (output_blocked_) {
            log::debug("closing a client that read nothing for send_timeout");
            close();
        } else if (!r_->body_complete) {
            fail(408, "request body stalled longer than body_timeout");
        }
        return;
    case State::closed:
        return;
    }
}

// ---- requests ------------------------------------------------------------

void ClientConnection::process_input() {
    parsing_ = true;
    parse_available_input();
    parsing_ = false;
    update_poll();
}

void ClientConnection::parse_available_input() {
    while ((state_ == State::reading_head || state_ == State::active) && !discard_input_) {
        // A complete request waits for its response before the next is parsed.
        if (state_ == State::active && r_->body_complete) break;
        // The listener took what it could: the rest waits in the buffer.
        if (r_->body_held) break;
        // Body data reaches the listener from the parser (on_request_body).
        RequestParser::Outcome outcome =
            r_->parser.parse(input_ + input_parsed_, input_filled_ - input_parsed_);
        input_parsed_ += outcome.consumed;
        switch (outcome.step) {
        case RequestParser::Step::need_more_data:
            if (r_->parser.in_head() && input_parsed_ > server_.config.server.max_header_bytes) {
                fail(r_->parser.in_request_line() ? 414 : 431, "request head too large");
                return;
            }
            // Body bytes were handed on: their room is reused.
            if (state_ == State::active) input_filled_ = input_parsed_ = r_->body_start;
            return;
        case RequestParser::Step::head_complete:
            state_ = State::active;
            r_->body_start = input_parsed_;
            on_head_complete();
            r_->parser.resume();
            break;
        case RequestParser::Step::body_paused:
            if (r_->body_too_large) {
                fail(413, "request body larger than max_body_bytes");
                return;
            }
            // Held by the listener (the loop stops above), or resumed already.
            break;
        case RequestParser::Step::message_complete:
            r_->body_complete = true;
            if (r_->location >= 0 && !r_->handler_started && !r_->response_begun) {
                // The response, once written, finishes the request itself
                // (and may already have started the next pipelined one).
                serve();
                break;
            }
            if (r_->listener) {
                CodecState* current = r_;
                r_->listener->on_request_complete();
                if (r_ != current) break;
            }
            if (r_->response_ended && r_->output.empty()) on_response_complete();
            break;
        case RequestParser::Step::failed:
            fail(r_->parser.error_status(), r_->parser.error_reason());
            return;
        }
    }
}

void ClientConnection::on_head_complete() {
    http::Request& request = r_->parser.request();
    const config::ServerConfig& limits = server_.config.server;
    // The head arrived in fewer reads than the limit check in the parse loop saw.
    if (input_parsed_ > limits.max_header_bytes) {
        size_t line_end =
            static_cast<size_t>(request.target.data() + request.target.size() - input_);
        fail(line_end > limits.max_header_bytes ? 414 : 431, "request head too large");
        return;
    }
    if (request.content_length > limits.max_body_bytes) {
        fail(413, "Content-Length larger than max_body_bytes");
        return;
    }
    if (request.has_body())
        arm(limits.body_timeout);
    else
        timer_.disarm();

    http::take_connection(request, *transport_);
    if (!http::route_request(server_, request, *this, *r_)) return;
    // RFC 9110 10.1.1: the client holds the body back until told to send it.
    if (request.expect_continue) {
        r_->output.push_memory(continue_response);
        flush_output();
    }
    // The others start at message_complete (Handler::streams_request_body).
    if (server_.serving[static_cast<size_t>(r_->location)].streams_body) serve();
}

void ClientConnection::resume_request_body() {
    if (!r_->body_held) return;
    r_->body_held = false;
    if (state_ != State::active) {  // a tunnel: only reading was stopped
        update_poll();
        return;
    }
    // The parser stopped inside the body: what is still in the buffer goes
    // on now (the loop in progress, if any, does it itself).
    r_->parser.resume();
    if (!parsing_) process_input();
}

void ClientConnection::on_tunnel_input() {
    size_t from = input_parsed_;
    input_parsed_ = input_filled_;
    if (r_->listener && input_filled_ > from &&
        !r_->listener->on_request_body({input_ + from, input_filled_ - from}))
        r_->body_held = true;
    // The listener took the bytes: the room is reused.
    input_filled_ = input_parsed_ = 0;
    update_poll();
}

void ClientConnection::serve() {
    r_->handler_started = true;
    http::serve_location(server_, *this, r_->location);
}

// Decoded body data from the parser, as llhttp finds it: the limit counts
// data, not chunk framing. Without a listener the body is dropped.
bool ClientConnection::on_request_body(std::string_view data) {
    // llhttp reports a span cut at the end of a read even when it is empty;
    // an empty piece must not reach a listener that chunk-encodes it.
    if (data.empty()) return true;
    r_->body_received += data.size();
    if (r_->body_received > server_.config.server.max_body_bytes) {
        r_->body_too_large = true;
        return false;
    }
    if (r_->listener == nullptr) return true;
    if (!r_->listener->on_request_body(data)) r_->body_held = true;
    // The parser stops after this piece when the listener is full, or when
    // the exchange ended under it (the rest of the input is not for it).
    return !r_->body_held && state_ == State::active && !discard_input_;
}

void ClientConnection::fail(int status, const char* reason) {
    log::debug("client error {}: {}", status, reason);
    // The handler's exchange ends here, whatever it was waiting for.
    if (http::ExchangeListener* listener = std::exchange(r_->listener, nullptr))
        listener->on_client_gone();
    discard_input_ = true;
    close_after_response_ = true;
    // A client still sending is drained before the close; a slow one is not waited for.
    linger_on_close_ = status != 408;
    if (r_->response_begun || state_ == State::lingering) {
        record_request(status);  // too late to answer it, but that is why it ended
        close();
        return;
    }
    state_ = State::active;
    r_->location = -1;
    respond_text(status, http::status_text(status));
}

void ClientConnection::on_response_complete() {
    if (corked_) set_cork(false);  // with TCP_NODELAY, the tail goes out now
    ++responses_completed_;
    record_request(r_->response_status);
    if (close_after_response_) {
        close_after_output();
        return;
    }
    if (r_->body_complete) {
        finish_request();
        return;
    }
    // The rest of the body is read and dropped, then the next request; a
    // listener that held it back is gone now.
    if (r_->body_held) resume_request_body();
}

void ClientConnection::finish_request() {
    ++requests_served_;
    if (server_.draining) {
        close_after_output();
        return;
    }
    release_request_state();
    // Pipelined bytes move to the front: the next head starts at offset 0.
    size_t leftover = input_filled_ - input_parsed_;
    if (leftover > 0) std::memmove(input_, input_ + input_parsed_, leftover);
    input_filled_ = leftover;
    input_parsed_ = 0;
    if (leftover > 0) {
        state_ = State::reading_head;
        begin_request();  // a pipelined request starts when its turn comes
        arm(server_.config.server.header_timeout);
    } else {
        state_ = State::idle;
        arm(server_.config.server.keepalive_timeout);
        release_idle_buffer();
    }
    update_poll();
    // Called from a write completing (not from the parse loop): go on with
    // the pipelined requests already read.
    if (!parsing_ && leftover > 0) process_input();
}

// An idle connection keeps no buffer.
void ClientConnection::release_idle_buffer() {
    transport_->release_buffers();
    server_.buffers.release(input_);
    input_ = nullptr;
    input_filled_ = input_parsed_ = 0;
}

void ClientConnection::close_after_output() {
    bool unread_input = !r_->body_complete || input_parsed_ < input_filled_ || discard_input_;
    if (!linger_on_close_ && discard_input_) unread_input = false;
    if (!unread_input || peer_closed_) {
        close();
        return;
    }
    transport_->shutdown_write();
    state_ = State::lingering;
    discard_input_ = true;
    arm(linger_timeout);
    update_poll();
}

}  // namespace portico::http1
