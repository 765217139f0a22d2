// The response half of ClientConnection: building the head, queueing the
// body, and writing it out (see connection.hpp for the I/O design).
#include <spdlog/spdlog.h>

#include "http/connection.hpp"
#include "http/status.hpp"

namespace portico::http {

namespace {

// RFC 9110 6.4.1: these never have a body, so they carry no Content-Length.
bool is_bodyless_status(int status) { return status < 200 || status == 204 || status == 304; }

}  // namespace

const Request& ClientConnection::request() const { return parser_.request(); }

const config::LocationConfig& ClientConnection::location() const {
    return server_.config.locations[static_cast<size_t>(location_)];
}

bool ClientConnection::keep_alive_after_response() const {
    const config::ServerConfig& limits = server_.config.server;
    const Request& request = parser_.request();
    // An upgrade request left unanswered by a tunnel leaves the parser in
    // the upgraded state: nothing after it can be read as HTTP.
    return !close_after_response_ && !server_.draining && !peer_closed_ && !request.upgrade &&
           request.wants_keep_alive && limits.keepalive_timeout.count() > 0 &&
           requests_served_ + 1 < limits.keepalive_requests;
}

void ClientConnection::start_head(int status) {
    response_begun_ = true;
    response_status_ = status;
    response_start_bytes_ = bytes_sent_;
    response_start_file_bytes_ = output_.file_bytes_sent();
    if (head_buffer_ == nullptr) head_buffer_ = server_.buffers.acquire();
    head_ = ResponseHead(head_buffer_, server_.buffers.block_size());
    head_.status_line(status);
    const std::string& server_header = server_.config.server.server_header;
    if (!server_header.empty()) head_.header("Server", server_header);
    head_.header("Date", server_.date.now());
}

void ClientConnection::begin_response(int status, uint64_t content_length) {
    start_head(status);
    if (!is_bodyless_status(status)) head_.header("Content-Length", content_length);
}

void ClientConnection::begin_streamed_response(int status, BodyFraming framing) {
    start_head(status);
    if (is_bodyless_status(status)) return;
    if (framing == BodyFraming::chunked) {
        chunked_response_ = true;
        head_.header("Transfer-Encoding", "chunked");
    } else {
        close_after_response_ = true;  // the end of the body is the close
    }
}

void ClientConnection::add_header(std::string_view name, std::string_view value) {
    head_.header(name, value);
}

void ClientConnection::commit_head() {
    head_committed_ = true;
    if (state_ == State::tunnel) {
        // The handler wrote "Connection: Upgrade" itself.
    } else if (keep_alive_after_response()) {
        // HTTP/1.0 keeps the connection only when told (RFC 9112 9.3).
        if (parser_.request().version_minor == 0) head_.header("Connection", "keep-alive");
    } else {
        close_after_response_ = true;
        head_.header("Connection", "close");
    }
    if (location_ >= 0)
        for (const auto& [name, value] : location().headers) head_.header(name, value);
    head_.end();
    if (head_.overflowed()) {
        spdlog::error("response head for {} exceeds {} bytes; closing the connection",
                      parser_.request().target, server_.buffers.block_size());
        close();
        return;
    }
    output_.push_memory(head_.bytes());
}

void ClientConnection::send_body(std::string_view bytes) {
    if (state_ == State::closed) return;
    if (!head_committed_) commit_head();
    if (parser_.request().is_head() && state_ != State::tunnel) return;
    output_.push_memory(bytes);
    // Written now, head and all in one writev when it is the first piece; a
    // streaming handler then checks output_pending() before reading more.
    flush_output();
}

void ClientConnection::send_owned_body(std::string_view bytes, std::shared_ptr<const void> owner) {
    body_owner_ = std::move(owner);
    send_body(bytes);
}

void ClientConnection::send_file(int fd, off_t offset, uint64_t length,
                                 std::shared_ptr<const void> owner) {
    if (!head_committed_) commit_head();
    if (parser_.request().is_head()) return;
    output_.push_file(fd, offset, length);
    body_owner_ = std::move(owner);
}

void ClientConnection::end_response() {
    if (state_ == State::closed) return;
    if (!head_committed_) commit_head();
    response_ended_ = true;
    listener_ = nullptr;
    if (state_ == State::tunnel) close_after_response_ = true;
    flush_output();
}

void ClientConnection::abort() {
    listener_ = nullptr;
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

void ClientConnection::set_upstream_timing(uint64_t upstream_ns, uint64_t connect_ns,
                                           std::string_view server) {
    proxied_ = true;
    upstream_ns_ = upstream_ns;
    connect_ns_ = connect_ns;
    upstream_server_ = server;
}

// The last response byte is out: the timeline ends here.
void ClientConnection::record_request() {
    if (location_ < 0) return;
    metrics::RequestRecord record;
    record.status = response_status_;
    record.response_bytes = bytes_sent_ - response_start_bytes_;
    record.sendfile_bytes = output_.file_bytes_sent() - response_start_file_bytes_;
    record.duration_ns = uv_hrtime() - request_start_ns_;
    record.proxied = proxied_;
    record.upstream_ns = upstream_ns_;
    server_.counters.request_finished(static_cast<size_t>(location_), record);
}

void ClientConnection::respond_text(int status, std::string_view body) {
    bool bodyless = is_bodyless_status(status);
    begin_response(status, bodyless ? 0 : body.size());
    if (!bodyless) {
        add_header("Content-Type", "text/plain; charset=utf-8");
        send_body(body);
    }
    end_response();
}

void ClientConnection::flush_output() {
    if (state_ == State::closed) return;
    uint64_t sent_before = bytes_sent_;
    switch (output_.flush(fd_, bytes_sent_)) {
    case OutputQueue::FlushResult::failed:
        close();
        return;
    case OutputQueue::FlushResult::would_block:
        // send_timeout is the longest gap between writes, not a total.
        if (!output_blocked_ || bytes_sent_ > sent_before)
            arm_timer(server_.config.server.send_timeout);
        output_blocked_ = true;
        update_poll();
        return;
    case OutputQueue::FlushResult::done:
        break;
    }
    if (output_blocked_) {
        output_blocked_ = false;
        if (!body_complete_ && state_ == State::active)
            arm_timer(server_.config.server.body_timeout);
        else if (state_ != State::idle)
            timer_.disarm();
        // Only after a wait: a listener told synchronously would recurse.
        if (listener_) listener_->on_output_drained();
        if (state_ == State::closed) return;
    }
    if (response_ended_ && output_.empty()) on_response_complete();
    update_poll();
}

}  // namespace portico::http
