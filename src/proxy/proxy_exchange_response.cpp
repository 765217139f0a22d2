// The client-bound half of ProxyExchange: the upstream's response read,
// parsed, and passed to the client's exchange as it comes, with the
// client's back-pressure (see proxy_exchange.hpp).
#include <cerrno>
#include <cstring>

#include "core/log.hpp"
#include "proxy/forwarded_head.hpp"
#include "proxy/proxy_exchange.hpp"

namespace portico::proxy {

namespace {

// Upstream blocks read in one readiness event (see on_upstream_event).
constexpr int max_blocks_per_event = 4;

}  // namespace

// ---- client-bound bytes --------------------------------------------------

void ProxyExchange::on_upstream_event(UpstreamConnection&, int events) {
    Guard guard(*this);
    if (phase_ == Phase::connecting) {
        // A refused connect is reported as ready; SO_ERROR says what happened.
        int error = connection_->connected ? 0 : connection_->finish_connect();
        if (error != 0) {
            fail(metrics::UpstreamError::connect, std::strerror(error));
            return;
        }
        continue_connect();
        return;
    }
    if (events & core::io_writable) write_upstream();
    if (!(events & core::io_readable)) return;
    // A read that filled the block left more queued on the socket: read it
    // now, each block still passed on (compressed and flushed) as it comes,
    // while the client takes what it gets at once. A response then goes
    // through in one turn of the loop instead of one turn per block, so a
    // compressing stream's encoder (1.6 MiB of brotli tables at level 6)
    // works in a warm cache instead of being evicted by the other streams'
    // between two blocks. Bounded: other connections wait no more than
    // this many blocks.
    for (int blocks = 0; blocks < max_blocks_per_event && phase_ != Phase::done; ++blocks) {
        if (!read_upstream()) break;
        if (!connection_ || waiting_for_client_ || input_filled_ != 0) break;
    }
    flush_body_if_owed();
}

// What was passed on as "more follows" is made decodable before we wait
// when the more did not come (the next read found nothing, the client is
// slow, or the loop's bound): a stream stays live.
void ProxyExchange::flush_body_if_owed() {
    if (std::exchange(body_flush_owed_, false) && exchange_) exchange_->flush_body();
}

bool ProxyExchange::read_upstream() {
    if (input_ == nullptr) input_ = response_buffers_.acquire();
    size_t room = response_buffers_.block_size() - input_filled_;
    ssize_t received = connection_->read(input_ + input_filled_, room);
    if (received < 0) {
        // A TLS alert (TLS 1.3 refuses a client certificate after the
        // client's handshake ended, so at the first read) is TLS's failure.
        if (errno == EPROTO && connection_->secure())
            fail(metrics::UpstreamError::tls, connection_->tls_failure().c_str());
        else if (errno != EAGAIN && errno != EINTR)
            fail(metrics::UpstreamError::reset, std::strerror(errno));
        return false;
    }
    if (received == 0) {
        on_upstream_closed();
        return false;
    }
    response_byte_seen_ = true;
    input_filled_ += static_cast<size_t>(received);
    arm_response_timer();
    if (phase_ == Phase::tunnel) {
        size_t from = input_parsed_;
        input_parsed_ = input_filled_;
        forward_body({input_ + from, input_filled_ - from});
        if (phase_ != Phase::done && !waiting_for_client_) input_filled_ = input_parsed_ = 0;
        update_watch();
        return static_cast<size_t>(received) == room;
    }
    // A read that filled the block is followed at once by the next one (the
    // loop in on_upstream_event): what it brought needs no flush of its own.
    // So is one that left TLS records read ahead (a read takes one record).
    bool more_queued = static_cast<size_t>(received) == room || connection_->has_buffered_input();
    parse_response(more_queued);
    // More of this response is to come, and the socket had nothing more: the
    // upstream may be holding it until we acknowledge what it sent (Nagle on
    // its side, our delayed ACK: 40 ms). Nothing to do for a response read
    // whole, nor after a read that filled the buffer (more was queued: a
    // bulk body, which Nagle does not hold back).
    bool socket_drained = !more_queued;
    if (phase_ == Phase::exchanging && connection_ && socket_drained) connection_->acknowledge_now();
    return !socket_drained;
}

void ProxyExchange::parse_response(bool more_follows) {
    while (exchange_ && phase_ == Phase::exchanging) {
        // The body's data is gathered by on_decoded_body as llhttp finds it.
        ResponseParser::Outcome outcome =
            parser_.parse(input_ + input_parsed_, input_filled_ - input_parsed_);
        input_parsed_ += outcome.consumed;
        if (!exchange_ || phase_ != Phase::exchanging) return;
        switch (outcome.step) {
        case ResponseParser::Step::need_more_data:
            // Passed on the moment it arrives: one send per upstream read.
            forward_body_pieces(more_follows);
            if (!exchange_) return;
            if (!head_forwarded_ && input_filled_ == response_buffers_.block_size()) {
                fail(metrics::UpstreamError::bad_response, "response head larger than the buffer");
                return;
            }
            if (head_forwarded_ && !waiting_for_client_) input_filled_ = input_parsed_ = 0;
            update_watch();
            return;
        case ResponseParser::Step::head_complete:
            forward_response_head();
            if (!exchange_ || phase_ != Phase::exchanging) return;
            parser_.resume();
            break;
        case ResponseParser::Step::message_complete:
            if (!head_forwarded_) {
                // An interim 1xx (the client had its 100 from us): skip it.
                parser_.next_message();
                break;
            }
            complete_response();
            return;
        case ResponseParser::Step::failed:
            // The data before the fault goes out, then the cut shows.
            forward_body_pieces(false);
            if (!exchange_) return;
            fail(metrics::UpstreamError::bad_response, parser_.error_reason());
            return;
        }
    }
}

void ProxyExchange::forward_response_head() {
    const UpstreamResponse& response = parser_.response();
    int status = response.status;
    if (status >= 100 && status < 200 && status != 101) return;  // skipped at its end
    if (status == 101) {
        if (!websocket_) {
            fail(metrics::UpstreamError::bad_response, "101 Switching Protocols to a request that did not ask");
            return;
        }
        head_forwarded_ = true;
        phase_ = Phase::tunnel;
        exchange_->begin_response(101, 0);
        add_upstream_response_headers(*exchange_, response, rules_.location().hide_headers,
                                      rules_.expires());
        exchange_->switch_protocols();
        if (!exchange_) return;
        // What followed the 101 head is the upstream's first tunnel bytes.
        if (input_filled_ > input_parsed_)
            forward_body({input_ + input_parsed_, input_filled_ - input_parsed_});
        input_parsed_ = input_filled_;
        if (phase_ != Phase::done && !waiting_for_client_) input_filled_ = input_parsed_ = 0;
        update_watch();
        return;
    }
    // The upstream's framing stays here: its chunks are decoded (their
    // extensions and trailer fields dropped, as nginx does by default), and
    // the client connection frames the data for its own client (chunks for
    // HTTP/1.1, the close for HTTP/1.0). A HEAD, 204 or 304 without a length
    // gets no made-up Content-Length: 0.
    if (response.has_content_length)
        exchange_->begin_response(status, response.content_length);
    else
        exchange_->begin_streamed_response(status);
    add_upstream_response_headers(*exchange_, response, rules_.location().hide_headers,
                                  rules_.expires());
    head_forwarded_ = true;
}

void ProxyExchange::on_decoded_body(std::string_view piece) {
    if (piece.empty()) return;  // llhttp's span cut at the end of a read
    // A read with more chunks than we keep views for sends them in groups.
    if (body_piece_count_ == body_pieces_.size()) forward_body_pieces(true);
    body_pieces_[body_piece_count_++] = piece;
}

void ProxyExchange::forward_body_pieces(bool more_follows) {
    size_t count = std::exchange(body_piece_count_, 0);
    if (!exchange_ || count == 0) return;
    body_flush_owed_ = more_follows;
    if (more_follows) exchange_->expect_more_body();
    exchange_->send_body_pieces({body_pieces_.data(), count}, false);
    // The bytes are in our buffer: it is not reused until they are written.
    // A send can also finish what an earlier one left pending (no drain is
    // reported from inside it): the wait is over then.
    if (exchange_) waiting_for_client_ = exchange_->output_pending();
}

void ProxyExchange::forward_body(std::string_view bytes) {
    if (!exchange_ || bytes.empty()) return;
    exchange_->send_body(bytes);
    // As in forward_body_pieces.
    if (exchange_) waiting_for_client_ = exchange_->output_pending();
}

void ProxyExchange::on_output_drained() {
    Guard guard(*this);
    waiting_for_client_ = false;
    if (input_parsed_ == input_filled_) input_filled_ = input_parsed_ = 0;
    if (phase_ == Phase::exchanging) parse_response(false);
    flush_body_if_owed();
    if (phase_ != Phase::done) update_watch();
}

void ProxyExchange::complete_response() {
    bool reuse = can_reuse();
    upstream_.report_success(*server_);
    http::Exchange* exchange = std::exchange(exchange_, nullptr);
    report_upstream_timing(*exchange);
    release_connection(reuse);
    finish();
    // The last bytes read may still wait for a slow client after this object
    // is gone: their buffer goes with the response, not back to the pool,
    // where the next proxied response would be read over them.
    if (input_ != nullptr)
        exchange->hand_over_buffer(response_buffers_, std::exchange(input_, nullptr));
    // The body's last data and its end leave together.
    body_flush_owed_ = false;
    size_t count = std::exchange(body_piece_count_, 0);
    exchange->send_body_pieces({body_pieces_.data(), count}, true);
}

// The upstream's part of the request timeline, for the counters and the
// access log: a response that arrived, whole or cut short.
void ProxyExchange::report_upstream_timing(http::Exchange& exchange) const {
    // The entry's text, which lives as long as the config: the access log
    // reads it after the response, when a drained server may be freed.
    exchange.set_upstream_timing(uv_hrtime() - request_sent_ns_, connect_ns_,
                                 server_->entry->text);
}

// The one checklist for giving a connection back to the pool: a complete,
// well-framed exchange after which the upstream expects another request.
bool ProxyExchange::can_reuse() const {
    return phase_ == Phase::exchanging && !websocket_ && upstream_.config().keepalive > 0 &&
           parser_.response().keep_alive && !parser_.ends_at_close() && request_complete_ &&
           to_upstream_.empty() && body_in_flight_.empty() && input_parsed_ == input_filled_;
}

void ProxyExchange::on_upstream_closed() {
    if (phase_ == Phase::tunnel) {
        http::Exchange* exchange = std::exchange(exchange_, nullptr);
        release_connection(false);
        finish();
        exchange->end_response();
        return;
    }
    if (head_forwarded_ && parser_.ends_at_close() && parser_.finish()) {
        complete_response();
        return;
    }
    fail(metrics::UpstreamError::reset, response_byte_seen_ ? "upstream closed the connection mid-response"
                                             : "upstream closed the connection before responding");
}

void ProxyExchange::on_upstream_timeout(UpstreamConnection&) {
    Guard guard(*this);
    if (phase_ == Phase::tunnel) {
        on_upstream_closed();  // idle for read_timeout both ways: the tunnel ends
        return;
    }
    if (phase_ == Phase::connecting) connect_timed_out_ = true;
    fail(phase_ == Phase::connecting ? metrics::UpstreamError::connect : metrics::UpstreamError::timeout,
         phase_ == Phase::connecting ? "connect_timeout passed" : "read_timeout or send_timeout passed");
}

}  // namespace portico::proxy
