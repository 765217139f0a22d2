#include "proxy/proxy_exchange.hpp"

#include <llhttp.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/log.hpp"
#include "http/chunked_coding.hpp"
#include "http/status.hpp"
#include "proxy/forwarded_head.hpp"

namespace portico::proxy {

namespace {

// A retry must resend the body: it is kept while it is small.
constexpr size_t max_replay_bytes = 64 * 1024;

bool is_idempotent(uint8_t method) {
    return method == HTTP_GET || method == HTTP_HEAD || method == HTTP_PUT ||
           method == HTTP_DELETE || method == HTTP_OPTIONS || method == HTTP_TRACE;
}

uint64_t ms(config::Duration duration) { return static_cast<uint64_t>(duration.count()); }

}  // namespace

ProxyExchange::ProxyExchange(http::Exchange& exchange, Upstream& upstream,
                             UpstreamRequestRules& rules, core::BufferPool& buffers,
                             core::BufferPool& response_buffers, core::IoPoller& poller)
    : exchange_(&exchange),
      upstream_(upstream),
      rules_(rules),
      buffers_(buffers),
      response_buffers_(response_buffers),
      poller_(poller),
      parser_(exchange.request().is_head() && !exchange.request().upstream_whole_object, *this) {}

ProxyExchange::~ProxyExchange() {
    response_buffers_.release(input_);
    buffers_.release(head_block_);
}

void ProxyExchange::start() {
    Guard guard(*this);
    const http::Request& request = exchange_->request();
    websocket_ = is_websocket_request(request, rules_.location());
    chunked_request_ = request.chunked;
    request_complete_ = !request.has_body();
    exchange_->set_listener(this);
    attempt();
    // The body may have been held while the request waited at its
    // location's checks (http/admission.hpp); it flows now.
    if (exchange_) exchange_->resume_request_body();
}

// ---- choosing a server and a connection ----------------------------------

void ProxyExchange::attempt() {
    bool busy = false;
    server_ = upstream_.pick(exchange_->client_address(), tried_, busy);
    if (server_ == nullptr && busy) {
        upstream_.wait_for_room(*this);  // on_room() or on_wait_timeout() follows
        return;
    }
    if (server_ == nullptr) {
        // Every server tried: a timeout among the failures makes it a 504.
        int status = connect_timed_out_ ? 504 : 502;
        exchange_->respond_text(status, http::status_text(status));
        exchange_ = nullptr;
        finish();
        return;
    }
    tried_.add(server_);

    if (head_block_ == nullptr) head_block_ = buffers_.acquire();
    http::ResponseHead head(head_block_, buffers_.block_size());
    write_upstream_request_head(head, exchange_->request(), exchange_->client_address(), rules_,
                                upstream_.host_header(*server_), websocket_,
                                upstream_.config().keepalive > 0);
    if (head.overflowed()) {
        log::error("request head for {} too large to forward", exchange_->request().target);
        exchange_->respond_text(502, http::status_text(502));
        exchange_ = nullptr;
        finish();
        return;
    }
    head_ = head.bytes();
    to_upstream_.clear();
    to_upstream_.push_memory(head_);
    request_sent_ = false;

    connection_ = upstream_.take_idle(*server_);
    reused_ = connection_ != nullptr;
    // Body bytes that came while this request waited (queued, or its
    // connect failed) are part of what a retry must send again.
    if (reused_ && replayable_ && replay_.empty() && !body_in_flight_.empty()) {
        if (body_in_flight_.size() > max_replay_bytes) replayable_ = false;
        else replay_ = body_in_flight_;
    }
    connect_started_ns_ = uv_hrtime();
    if (connection_ == nullptr) {
        int error = 0;
        connection_ = UpstreamConnection::open(poller_, *server_, error);
        if (connection_ == nullptr) {
            fail(metrics::UpstreamError::connect, std::strerror(error));
            return;
        }
    }
    ++server_->active_requests;
    await_connect();
}

// A pooled connection is ready; a new one's connect may still be on its way.
void ProxyExchange::await_connect() {
    phase_ = Phase::connecting;
    // (Not with TLS: the handshake goes first.)
    if (!connection_->connected && !connection_->secure()) {
        // On loopback the handshake is usually over by the time connect()
        // says EINPROGRESS: a socket that takes the head now is connected,
        // which saves a loop turn, an epoll_ctl and a getsockopt. One still
        // connecting answers EAGAIN; a refused one says why.
        uint64_t sent = 0;
        transport::OutputQueue::FlushResult result = connection_->write(to_upstream_, sent);
        if (sent > 0) {
            connection_->connected = true;
            request_sent_ = true;
        } else if (result == transport::OutputQueue::FlushResult::failed) {
            fail(metrics::UpstreamError::connect, std::strerror(errno));
            return;
        }
    }
    if (connection_->ready()) {
        on_connected();
        return;
    }
    if (connection_->connected) {
        continue_connect();  // TLS's handshake
        return;
    }
    if (!connection_->watch(this, core::io_writable)) {
        fail(metrics::UpstreamError::connect, std::strerror(errno));
        return;
    }
    connection_->arm_timer(ms(upstream_.config().connect_timeout));
}

// The socket is connected: TLS's handshake, if any, then the request. Each
// wait of the handshake is bounded by connect_timeout, as nginx's
// proxy_connect_timeout bounds its SSL handshake.
void ProxyExchange::continue_connect() {
    if (!connection_->ready()) {
        switch (connection_->handshake()) {
        case tls::TlsStream::Step::done:
            break;
        case tls::TlsStream::Step::blocked:
            if (!connection_->watch(this, connection_->handshake_wants())) {
                fail(metrics::UpstreamError::connect, std::strerror(errno));
                return;
            }
            connection_->arm_timer(ms(upstream_.config().connect_timeout));
            return;
        case tls::TlsStream::Step::failed:
            fail(metrics::UpstreamError::tls, connection_->tls_failure().c_str());
            return;
        }
    }
    on_connected();
}

void ProxyExchange::on_connected() {
    phase_ = Phase::exchanging;
    request_sent_ns_ = uv_hrtime();
    metrics::WorkerCounters& counters = upstream_.counters();
    connect_ns_ = reused_ ? 0 : request_sent_ns_ - connect_started_ns_;
    if (!reused_) counters.upstream_connected(upstream_.index(), server_->index, connect_ns_);
    counters.upstream_request_sent(upstream_.index(), server_->index, reused_);
    write_upstream();
}

// ---- upstream-bound bytes ------------------------------------------------

bool ProxyExchange::on_request_body(std::string_view data) {
    Guard guard(*this);
    if (phase_ == Phase::done) return true;
    // Framed as the client framed it: a Content-Length body as it is (the
    // head says the same length), a chunked one encoded again, a chunk per
    // piece of data the client's parser delivers, without its extensions
    // and trailers (nginx with proxy_request_buffering off does the same).
    if (!chunked_request_ || phase_ == Phase::tunnel) return send_request_body({&data, 1});
    if (data.empty()) return true;  // a zero-size chunk would end the body
    char line[http::max_chunk_size_line];
    std::string_view chunk[] = {http::chunk_size_line(data.size(), line), data, http::chunk_end};
    return send_request_body(chunk);
}

void ProxyExchange::on_request_complete() {
    Guard guard(*this);
    request_complete_ = true;
    if (chunked_request_ && phase_ != Phase::done && phase_ != Phase::tunnel)
        send_request_body({&http::last_chunk, 1});  // the client is done: no need to hold it
    if (phase_ == Phase::exchanging && to_upstream_.empty() && body_in_flight_.empty())
        arm_response_timer();
}

// nginx's proxy_read_timeout: the wait for the response starts once the
// whole request is sent. Before that the client's body is still arriving,
// its gaps are body_timeout's (the client connection's), and a write the
// upstream does not take is send_timeout's: a slow upload must not get a
// 504 from read_timeout. A tunnel's read_timeout is its idle time.
void ProxyExchange::arm_response_timer() {
    if (request_complete_ || phase_ == Phase::tunnel)
        connection_->arm_timer(ms(upstream_.config().read_timeout));
    else
        connection_->stop_timer();
}

bool ProxyExchange::send_request_body(std::span<const std::string_view> framed) {
    uint64_t size = 0;
    for (std::string_view piece : framed) size += piece.size();
    if (reused_ && !retried_ && replayable_) {
        if (replay_.size() + size > max_replay_bytes) replayable_ = false;
        else
            for (std::string_view piece : framed) replay_.append(piece);
    }
    if (phase_ == Phase::tunnel) connection_->arm_timer(ms(upstream_.config().read_timeout));
    bool can_write_now = (phase_ == Phase::exchanging || phase_ == Phase::tunnel) &&
                         to_upstream_.empty() && body_in_flight_.empty();
    if (can_write_now) {
        for (std::string_view piece : framed) to_upstream_.push_memory(piece);
        uint64_t sent = 0;
        transport::OutputQueue::FlushResult result = connection_->write(to_upstream_, sent);
        if (result == transport::OutputQueue::FlushResult::done) return true;
        to_upstream_.clear();
        if (result == transport::OutputQueue::FlushResult::failed) {
            fail(metrics::UpstreamError::reset, "writing the request body failed");
            return true;
        }
        // The socket took part of it: keep the rest, and the client waits.
        body_in_flight_.clear();
        for (std::string_view piece : framed) {
            size_t skip = static_cast<size_t>(std::min<uint64_t>(sent, piece.size()));
            sent -= skip;
            body_in_flight_.append(piece.substr(skip));
        }
        in_flight_queued_ = true;
        to_upstream_.push_memory(body_in_flight_);
        connection_->arm_timer(ms(upstream_.config().send_timeout));
    } else {
        // Connecting, or the head is still going out: the bytes wait here.
        for (std::string_view piece : framed) body_in_flight_.append(piece);
    }
    client_held_ = true;
    update_watch();
    return false;
}

void ProxyExchange::write_upstream() {
    transport::OutputQueue::FlushResult result;
    for (;;) {
        uint64_t sent = 0;
        result = connection_->write(to_upstream_, sent);
        if (sent > 0) request_sent_ = true;
        if (result != transport::OutputQueue::FlushResult::done || body_in_flight_.empty() ||
            in_flight_queued_)
            break;
        to_upstream_.push_memory(body_in_flight_);
        in_flight_queued_ = true;
    }
    if (result == transport::OutputQueue::FlushResult::failed) {
        fail(metrics::UpstreamError::reset, std::strerror(errno));
        return;
    }
    if (result == transport::OutputQueue::FlushResult::would_block) {
        connection_->arm_timer(ms(upstream_.config().send_timeout));
        update_watch();
        return;
    }
    body_in_flight_.clear();
    in_flight_queued_ = false;
    arm_response_timer();
    update_watch();
    if (client_held_ && exchange_) {
        client_held_ = false;
        exchange_->resume_request_body();
    }
}

// ---- failures ------------------------------------------------------------

void ProxyExchange::fail(metrics::UpstreamError failure, const char* what) {
    if (phase_ == Phase::done) return;
    if (!response_byte_seen_ && retry_on_fresh_connection()) return;
    // A failed TLS handshake is a failed connect: another server may take it.
    bool connect_failed =
        failure == metrics::UpstreamError::connect || failure == metrics::UpstreamError::tls;
    if (uint64_t left_out = 0; server_->failure_log.allow(uv_now(poller_.loop()), left_out)) {
        const char* kind = failure == metrics::UpstreamError::tls       ? "tls"
                           : connect_failed                             ? "connect"
                           : failure == metrics::UpstreamError::timeout ? "timeout"
                           : failure == metrics::UpstreamError::reset   ? "reset"
                                                                        : "bad response";
        if (left_out == 0)
            log::error("upstream '{}' server {}: {} ({})", upstream_.config().name, server_->name,
                       what, kind);
        else
            log::error(
                "upstream '{}' server {}: {} ({}); {} more failure(s) of this server since the "
                "last "
                "line not logged",
                upstream_.config().name, server_->name, what, kind, left_out);
    }
    upstream_.report_failure(*server_, failure);
    release_connection(false);
    if (!exchange_) {
        finish();
        return;
    }
    // Nothing was sent: another server may take it (nginx's proxy_next_upstream).
    if (connect_failed && !request_sent_) {
        attempt();
        return;
    }
    if (head_forwarded_) {
        // Never end as if complete: the client must see the truncation.
        http::Exchange* exchange = std::exchange(exchange_, nullptr);
        report_upstream_timing(*exchange);
        exchange->abort();
    } else {
        int status = failure == metrics::UpstreamError::timeout ? 504 : 502;
        std::exchange(exchange_, nullptr)->respond_text(status, http::status_text(status));
    }
    finish();
}

// The race of kept-alive connections: the upstream closed an idle one just
// as this request went out on it. Safe to send again on a new connection
// when the method is idempotent or nothing was sent.
bool ProxyExchange::retry_on_fresh_connection() {
    if (!reused_ || retried_ || !exchange_ || !replayable_) return false;
    if (!is_idempotent(exchange_->request().method) && request_sent_) return false;
    retried_ = true;
    upstream_.counters().upstream_retried();
    log::info(
        "upstream '{}' server {} closed a kept-alive connection as a request was sent; "
        "retrying on a new connection",
        upstream_.config().name, server_->name);
    release_connection(false, true);
    int error = 0;
    connect_started_ns_ = uv_hrtime();
    connection_ = UpstreamConnection::open(poller_, *server_, error);
    if (connection_ == nullptr) {
        upstream_.wake_waiters();  // the slot is free after all
        return false;
    }
    ++server_->active_requests;
    reused_ = false;
    to_upstream_.clear();
    to_upstream_.push_memory(head_);
    to_upstream_.push_memory(replay_);
    body_in_flight_.clear();
    in_flight_queued_ = false;
    request_sent_ = false;
    input_filled_ = input_parsed_ = 0;
    await_connect();
    return true;
}

void ProxyExchange::on_room() {
    Guard guard(*this);
    if (phase_ == Phase::connecting && exchange_) attempt();
}

void ProxyExchange::on_wait_timeout() {
    Guard guard(*this);
    if (phase_ == Phase::done || !exchange_) return;
    if (upstream_.awaiting_addresses())
        log::warn("upstream '{}': no server name resolved within connect_timeout; answering 503",
                  upstream_.config().name);
    else
        log::warn(
            "upstream '{}': every server at max_connections ({}) for connect_timeout; "
            "answering 503 (raise max_connections, or add servers)",
            upstream_.config().name, upstream_.config().max_connections);
    upstream_.counters().upstream_queue_timed_out(upstream_.index());
    std::exchange(exchange_, nullptr)->respond_text(503, http::status_text(503));
    finish();
}

void ProxyExchange::on_client_gone() {
    Guard guard(*this);
    exchange_ = nullptr;
    release_connection(false);
    finish();
}

void ProxyExchange::release_connection(bool reuse, bool slot_reused) {
    if (connection_ == nullptr) return;
    UpstreamConnection* connection = std::exchange(connection_, nullptr);
    --server_->active_requests;
    connection->stop_timer();
    if (!reuse) {
        connection->close();
        if (!slot_reused) upstream_.wake_waiters();
        return;
    }
    ++connection->requests;
    connection->release_buffers();
    // Never idle longer than the upstream keeps it (its Keep-Alive:
    // timeout=N), with a margin for the close already on its way.
    uint64_t keep = ms(upstream_.config().idle_timeout);
    uint64_t announced = parser_.response().keep_alive_timeout_s * 1000;
    if (announced > 0) keep = std::min(keep, announced > 250 ? announced - 250 : 0);
    connection->keep_alive_ms = keep;
    upstream_.put_idle(connection);
    upstream_.wake_waiters();
}

void ProxyExchange::update_watch() {
    if (connection_ == nullptr || phase_ == Phase::done || phase_ == Phase::connecting) return;
    int events = 0;
    if (!to_upstream_.empty()) events |= core::io_writable;
    if (!waiting_for_client_ && input_filled_ < response_buffers_.block_size()) events |= core::io_readable;
    if (!connection_->watch(this, events)) fail(metrics::UpstreamError::reset, std::strerror(errno));
}

void ProxyExchange::finish() {
    if (phase_ == Phase::done) return;
    phase_ = Phase::done;
    upstream_.cancel_wait(*this);
    release_connection(false);
    if (exchange_) std::exchange(exchange_, nullptr)->set_listener(nullptr);
}

}  // namespace portico::proxy
