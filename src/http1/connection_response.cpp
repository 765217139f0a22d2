// The response half of ClientConnection: building the head, queueing the
// body, and writing it out (see connection.hpp for the I/O design).
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <utility>

#include "http/chunked_coding.hpp"
#include "http/location_headers.hpp"
#include "core/log.hpp"
#include "http1/connection.hpp"
#include "http/request_record.hpp"
#include "http/status.hpp"

namespace portico::http1 {

const http::Request& ClientConnection::request() const {
    return r_->parser.request();
}

const config::LocationConfig& ClientConnection::location() const {
    return server_.config.locations[static_cast<size_t>(r_->location)];
}

bool ClientConnection::keep_alive_after_response() const {
    const config::ServerConfig& limits = server_.config.server;
    const http::Request& request = r_->parser.request();
    // An upgrade request left unanswered by a tunnel leaves the parser in
    // the upgraded state: nothing after it can be read as HTTP.
    return !close_after_response_ && !server_.draining && !peer_closed_ && !request.upgrade &&
           request.wants_keep_alive && limits.keepalive_timeout.count() > 0 &&
           requests_served_ + 1 < limits.keepalive_requests;
}

void ClientConnection::start_head(int status) {
    r_->response_begun = true;
    r_->response_status = status;
    r_->response_start_bytes = bytes_sent_;
    r_->response_start_file_bytes = r_->output.file_bytes_sent();
    if (r_->head_buffer == nullptr) r_->head_buffer = server_.buffers.acquire();
    r_->head = http::ResponseHead(r_->head_buffer, server_.buffers.block_size());
    r_->head.status_line(status);
    const std::string& server_header = server_.config.server.server_header;
    if (!server_header.empty()) r_->head.header("Server", server_header);
    r_->head.header("Date", server_.date.now());
}

void ClientConnection::begin_response(int status, uint64_t content_length) {
    start_head(status);
    if (!http::is_bodyless_status(status)) r_->head.header("Content-Length", content_length);
}

void ClientConnection::begin_streamed_response(int status) {
    start_head(status);
    // No body to delimit: the connection stays as it is.
    if (http::is_bodyless_status(status) || request().is_head()) return;
    if (request().version_minor >= 1) {
        r_->chunked_response = true;
        r_->head.header("Transfer-Encoding", "chunked");
    } else {
        close_after_response_ = true;  // HTTP/1.0 has no chunks: the close ends the body
    }
}

void ClientConnection::add_header(std::string_view name, std::string_view value) {
    r_->head.header(name, value);
}

void ClientConnection::commit_head() {
    r_->head_committed = true;
    if (state_ == State::tunnel) {
        // The handler wrote "Connection: Upgrade" itself.
    } else if (keep_alive_after_response()) {
        // HTTP/1.0 keeps the connection only when told (RFC 9112 9.3).
        if (r_->parser.request().version_minor == 0) r_->head.header("Connection", "keep-alive");
    } else {
        close_after_response_ = true;
        r_->head.header("Connection", "close");
    }
    http::add_location_headers(server_, r_->location, r_->response_status, *this);
    r_->head.end();
    if (r_->head.overflowed()) [[unlikely]] {
        answer_head_overflow();
        return;
    }
    r_->output.push_memory(r_->head.bytes());
}

// The handler's head does not fit in a head block (an upstream that sent
// more header bytes than a block holds): the client gets a 502 with a body,
// as over HTTP/2, not an empty reply, and the connection closes after it.
// The handler hears that its client is gone, so it stops; what it still
// sends finds the response ended and is dropped.
void ClientConnection::answer_head_overflow() {
    log::error("response head for {} exceeds {} bytes; answering 502", r_->parser.request().target,
               server_.buffers.block_size());
    http::ExchangeListener* listener = std::exchange(r_->listener, nullptr);
    r_->head_committed = false;
    r_->chunked_response = false;
    close_after_response_ = true;
    respond_text(502, http::status_text(502));
    if (listener) listener->on_client_gone();
}

bool ClientConnection::response_closed() const {
    return state_ == State::closed || r_->response_ended;
}

void ClientConnection::send_body(std::string_view bytes) {
    if (state_ == State::closed) return;
    if (!r_->head_committed) commit_head();
    if (response_closed()) return;
    if (r_->parser.request().is_head() && state_ != State::tunnel) return;
    if (r_->chunked_response) [[unlikely]]
        queue_chunk({&bytes, 1}, false);
    else
        r_->output.push_memory(bytes);
    // Written now, head and all in one writev when it is the first piece; a
    // streaming handler then checks output_pending() before reading more.
    flush_output();
}

void ClientConnection::send_body_pieces(std::span<const std::string_view> pieces, bool last) {
    if (state_ == State::closed) return;
    if (!r_->head_committed) commit_head();
    if (response_closed()) return;
    if (!r_->parser.request().is_head() || state_ == State::tunnel) {
        if (r_->chunked_response) {
            queue_chunk(pieces, last);
            if (last) r_->chunked_response = false;  // framed to its end already
        } else {
            for (std::string_view piece : pieces) r_->output.push_memory(piece);
        }
    }
    if (last)
        end_response();  // the last-chunk joins them: one writev for all
    else
        flush_output();
}

// Size line, pieces, CRLF: one chunk, however many pieces, so an upstream
// read's worth of chunks costs one chunk here (nginx's chunked filter does
// the same per output call). The size line lives in the head buffer, past
// the head, until it is written.
void ClientConnection::queue_chunk(std::span<const std::string_view> pieces, bool last) {
    uint64_t size = 0;
    for (std::string_view piece : pieces) size += piece.size();
    if (size == 0) {  // an empty chunk would end the body
        if (last) r_->output.push_memory(http::last_chunk);
        return;
    }
    // Everything queued before was written, older size lines included.
    if (r_->output.empty()) r_->chunk_lines_used = 0;
    size_t head_size = r_->head.bytes().size();
    if (head_size + r_->chunk_lines_used + http::max_chunk_size_line >
        server_.buffers.block_size()) {
        // Only a handler that keeps sending while its output is pending gets
        // here (hundreds of chunks queued): its client gets a cut response.
        log::error("too many chunks queued for {}; closing the connection",
                   r_->parser.request().target);
        record_request(r_->response_status);
        close();  // the handler hears on_client_gone
        return;
    }
    std::string_view line =
        http::chunk_size_line(size, r_->head_buffer + head_size + r_->chunk_lines_used);
    r_->chunk_lines_used += line.size();
    r_->output.push_memory(line);
    for (std::string_view piece : pieces) r_->output.push_memory(piece);
    r_->output.push_memory(last ? http::chunk_end_and_last_chunk : http::chunk_end);
}

void ClientConnection::send_owned_body(std::string_view bytes, std::shared_ptr<const void> owner) {
    if (state_ == State::closed) return;
    if (!r_->head_committed) commit_head();
    if (response_closed()) return;
    r_->body_owner = std::move(owner);
    // Queued like a file range: a whole body, written by end_response (and
    // over TLS with the close_notify when the connection closes after it).
    if (!r_->parser.request().is_head()) r_->output.push_memory(bytes);
}

void ClientConnection::send_file(int fd, off_t offset, uint64_t length,
                                 std::shared_ptr<const void> owner) {
    if (!r_->head_committed) commit_head();
    if (response_closed() || r_->parser.request().is_head()) return;
    if (!corked_ && location().tcp_nopush) set_cork(true);
    r_->output.push_file(fd, offset, length);
    r_->body_owner = std::move(owner);
}

void ClientConnection::hand_over_buffer(core::BufferPool& pool, char* block) {
    r_->handed_over_pool = &pool;
    r_->handed_over_block = block;
}

void ClientConnection::end_response() {
    if (state_ == State::closed) return;
    if (!r_->head_committed) commit_head();
    if (response_closed()) return;
    if (r_->chunked_response) r_->output.push_memory(http::last_chunk);
    r_->response_ended = true;
    r_->listener = nullptr;
    if (state_ == State::tunnel) close_after_response_ = true;
    flush_output();
}

void ClientConnection::abort() {
    record_request(r_->response_status);  // the status the client was sent
    r_->listener = nullptr;
    close();
}

void ClientConnection::switch_protocols() {
    state_ = State::tunnel;
    timer_.disarm();
    commit_head();
    flush_output();
    // Bytes the client sent after its upgrade request belong to the tunnel.
    if (state_ == State::tunnel && input_filled_ > input_parsed_) on_tunnel_input();
    update_poll();
}

// The request ends: its last response byte is out, or the connection
// closes first. The timeline ends here, and the same numbers go to the
// counters and the access log, once per request. `status` is the one sent,
// unless the response was cut short (see record_request_cut_short).
void ClientConnection::record_request(int status) {
    if (std::exchange(r_->recorded, true)) return;
    // Only what was written of this request's response (none, when the
    // client left before it began).
    bool begun = r_->response_begun;
    http::record_finished_request(
        server_, {.request = r_->parser.request(),
                  .state = *r_,
                  .transport = *transport_,
                  .status = status,
                  .response_bytes = begun ? bytes_sent_ - r_->response_start_bytes : 0,
                  .head_bytes = r_->head_committed ? r_->head.bytes().size() : 0,
                  .sendfile_bytes =
                      begun ? r_->output.file_bytes_sent() - r_->response_start_file_bytes : 0});
}

// The connection closes before the request's last response byte is out,
// and nobody on our side ended it (abort() and fail() record first): the
// client went away, or read nothing for send_timeout. 499, nginx's code for
// a client that left. nginx keeps the status instead once part of the
// response went out; we do not, since a truncated download counted as a
// 200 would hide it. A tunnel's response was its 101, and either side ends
// a tunnel by closing.
void ClientConnection::record_request_cut_short() {
    record_request(state_ == State::tunnel ? r_->response_status : http::client_closed_request);
}

void ClientConnection::flush_output(bool from_socket_event) {
    if (state_ == State::closed || r_ == nullptr) return;
    uint64_t sent_before = bytes_sent_;
    if (close_after_response_ && r_->response_ended) [[unlikely]]
        transport_->close_after_output();
    transport::OutputQueue::FlushResult result = transport_->write(r_->output, bytes_sent_);
    switch (result) {
    case transport::OutputQueue::FlushResult::failed:
        close();
        return;
    case transport::OutputQueue::FlushResult::would_block:
        if (!send_buffer_raised_)
            send_buffer_raised_ =
                server_.send_buffer.raise(transport_->fd(), r_->output.pending_bytes());
        // send_timeout is the longest gap between writes, not a total.
        if (!output_blocked_ || bytes_sent_ > sent_before) arm(server_.config.server.send_timeout);
        output_blocked_ = true;
        update_poll();
        return;
    case transport::OutputQueue::FlushResult::done:
        break;
    }
    bool was_blocked = output_blocked_;
    if (output_blocked_) {
        output_blocked_ = false;
        if (!r_->body_complete && state_ == State::active)
            arm(server_.config.server.body_timeout);
        else if (state_ != State::idle)
            timer_.disarm();
        // Only from the socket's event: a send that finds the wait over
        // (the handler sent more while its output was pending, as the proxy
        // does with one read's chunks) must not call the handler back from
        // inside that send; it sees output_pending() when the send returns.
        // The listener may end the response (a filter writing its tail):
        // then its own flush completed it, may have started the next
        // request, and updated the poll; nothing here is this one's any more.
        if (r_->listener && from_socket_event) {
            uint32_t completed = responses_completed_;
            r_->listener->on_output_drained();
            if (state_ == State::closed || responses_completed_ != completed) return;
        }
    }
    if (r_->response_ended && r_->output.empty()) on_response_complete();
    // Only a write that had waited changes what epoll must watch (no more
    // writability); the next request and the close update it themselves. A
    // response written at once costs no epoll_ctl: not even for a client
    // answered and closed right after its accept (ab), whose socket then
    // never enters the epoll set.
    if (was_blocked) update_poll();
}

}  // namespace portico::http1
