// One proxied request, from picking a server to the last response byte: an
// explicit state machine (connecting, sending, waiting, receiving, tunnel)
// between the client's Exchange and one UpstreamConnection. It lives on the
// heap and deletes itself when done; a depth guard keeps it alive while a
// call into the exchange reports the client gone underneath it.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/buffer_pool.hpp"
#include "core/io_poller.hpp"
#include "http/exchange.hpp"
#include "transport/output_queue.hpp"
#include "proxy/response_parser.hpp"
#include "proxy/upstream.hpp"
#include "proxy/upstream_request_rules.hpp"

namespace portico::proxy {

class ProxyExchange final : public http::ExchangeListener,
                            private UpstreamConnection::Owner,
                            private UpstreamWaiter,
                            private ResponseParser::BodySink {
public:
    // `buffers` hold the request head; `response_buffers`, larger, what is
    // read from the upstream.
    // `rules`: the location's changes to the request and response.
    ProxyExchange(http::Exchange& exchange, Upstream& upstream, UpstreamRequestRules& rules,
                  core::BufferPool& buffers, core::BufferPool& response_buffers,
                  core::IoPoller& poller);
    // Starts the exchange; it ends (and frees itself) on its own.
    void start();

private:
    enum class Phase { connecting, exchanging, tunnel, done };
    // Every entry point holds one: the object is deleted when the outermost
    // call returns after finish(), never under a caller still using it.
    struct Guard {
        explicit Guard(ProxyExchange& exchange) : self(exchange) { ++self.depth_; }
        ~Guard() {
            if (--self.depth_ == 0 && self.phase_ == Phase::done) delete &self;
        }
        ProxyExchange& self;
    };

    ~ProxyExchange();

    // http::ExchangeListener
    bool on_request_body(std::string_view data) override;
    void on_request_complete() override;
    void on_output_drained() override;
    void on_client_gone() override;
    // UpstreamConnection::Owner
    void on_upstream_event(UpstreamConnection& connection, int events) override;
    void on_upstream_timeout(UpstreamConnection& connection) override;
    // UpstreamWaiter
    void on_room() override;
    void on_wait_timeout() override;
    // ResponseParser::BodySink
    void on_decoded_body(std::string_view piece) override;

    void attempt();
    void await_connect();
    void continue_connect();
    void on_connected();
    // Sends body bytes upstream, framed already, or keeps them until the
    // socket takes them; false when the client must wait.
    bool send_request_body(std::span<const std::string_view> framed);
    void write_upstream();
    void arm_response_timer();
    // One read and what it brought passed on; true when the read filled
    // the block (more may be queued on the socket).
    bool read_upstream();
    // `more_follows`: the read filled its block, the next one comes at once.
    void parse_response(bool more_follows);
    void forward_response_head();
    // Tunnel bytes, as they came.
    void forward_body(std::string_view bytes);
    // The body data decoded since the last call, as one send;
    // `more_follows`: more is passed on at once (expect_more_body).
    void forward_body_pieces(bool more_follows);
    void flush_body_if_owed();
    void complete_response();
    void report_upstream_timing(http::Exchange& exchange) const;
    void on_upstream_closed();
    void fail(metrics::UpstreamError failure, const char* what);
    bool retry_on_fresh_connection();
    bool can_reuse() const;
    // `slot_reused`: a retry opens the next connection in its place, so no
    // waiter is woken for it.
    void release_connection(bool reuse, bool slot_reused = false);
    void update_watch();
    void finish();

    http::Exchange* exchange_;  // nullptr once the client is gone
    Upstream& upstream_;
    UpstreamRequestRules& rules_;
    core::BufferPool& buffers_;
    core::BufferPool& response_buffers_;
    core::IoPoller& poller_;
    Phase phase_ = Phase::connecting;
    int depth_ = 0;

    UpstreamServer* server_ = nullptr;
    TriedServers tried_;
    UpstreamConnection* connection_ = nullptr;
    bool reused_ = false;
    bool retried_ = false;
    bool websocket_ = false;
    bool connect_timed_out_ = false;
    uint64_t connect_started_ns_ = 0;  // uv_hrtime, for the counters
    uint64_t connect_ns_ = 0;
    uint64_t request_sent_ns_ = 0;

    // Upstream-bound: the head (kept for a retry), then the body as it comes.
    char* head_block_ = nullptr;
    std::string_view head_;
    transport::OutputQueue to_upstream_;
    std::string body_in_flight_;  // client bytes the upstream socket has not taken yet
    bool in_flight_queued_ = false;  // body_in_flight_ is in to_upstream_: don't grow it
    std::string replay_;          // the body so far, while a retry may still need it
    bool replayable_ = true;
    bool request_sent_ = false;     // a byte of the head went out
    bool request_complete_ = false; // the client sent its whole body
    bool chunked_request_ = false;  // the client chunked its body: it goes upstream chunked too
    bool client_held_ = false;      // we told the exchange to stop reading the client

    // Client-bound.
    char* input_ = nullptr;
    size_t input_filled_ = 0;
    size_t input_parsed_ = 0;
    ResponseParser parser_;
    bool response_byte_seen_ = false;
    bool head_forwarded_ = false;
    // Body data the parser found in this read (views into input_), sent
    // together once the read is parsed: one chunk, one writev to the client.
    // In a union so that nothing initializes them: every proxied request
    // would pay for it, and the first body_piece_count_ are written before
    // they are read.
    union {
        std::array<std::string_view, 16> body_pieces_;
    };
    size_t body_piece_count_ = 0;
    bool waiting_for_client_ = false;  // output pending: upstream reads paused
    // A send went as "more follows" and nothing has followed yet: flushed
    // before the loop goes back to waiting (flush_body).
    bool body_flush_owed_ = false;
};

}  // namespace portico::proxy
