// One HTTP/2 stream: a request and its response, served through the same
// http::Exchange interface as an HTTP/1.1 request, so locations, static
// files, the proxy, `respond`, filters, counters and the access log work
// unchanged.
//
// Request: header fields are copied once into the stream's own buffer (the
// Request's views point there), :method/:path/:authority become the
// request line and Host. A body of unknown length (no content-length)
// looks like a chunked one to handlers, so the proxy frames it upstream.
// Body back-pressure is the stream's flow-control window: DATA a listener
// cannot take yet is held (at most a window's worth) and the window is
// given back only once the listener took the bytes.
//
// Response: the head becomes HEADERS when the first body bytes or the end
// come; body pieces queue in the stream (views, owned bodies, file
// ranges) and become DATA frames as the client's windows allow, so a
// stream whose window is shut keeps output_pending() true and its handler
// stops reading its upstream.
#pragma once

#include <nghttp2/nghttp2.h>

#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/small_blocks.hpp"
#include "http/exchange.hpp"
#include "http/request_state.hpp"
#include "transport/output_queue.hpp"
#include "http/request.hpp"

namespace portico::http2 {

class Session;

// The containers a stream fills on every request, handed from one stream to
// the next by the session, so a request allocates none of them once warm.
struct StreamBuffers {
    std::vector<http::HeaderField> request_headers;
    std::string response_fields;  // names (lower case) and values, back to back
    std::vector<std::pair<uint32_t, uint32_t>> field_lengths;  // of each name and value
};

class Stream final : public http::ServedExchange {
public:
    Stream(Session& session, int32_t id);
    ~Stream();
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;

    int32_t id() const { return id_; }

    // A stream per request: its memory is recycled (core/small_blocks.hpp).
    static void* operator new(size_t size) {
        if (void* block = core::small_blocks::allocate(size)) return block;
        throw std::bad_alloc();
    }
    static void operator delete(void* block) { core::small_blocks::release(block); }

    // ---- request, from the session's nghttp2 callbacks ----
    // One header field (pseudo-headers included, already checked by
    // nghttp2); false when the list grows past max_header_bytes.
    bool add_request_field(std::string_view name, std::string_view value);
    // HEADERS (and CONTINUATIONs) are in; `end_stream`: no body follows.
    void on_head_complete(bool end_stream);
    // DATA payload; `end_stream`: the last of the body.
    void on_body_data(std::string_view data);
    void on_body_end();
    // nghttp2 closed the stream (`error_code` NO_ERROR: both sides ended it).
    void on_closed(uint32_t error_code);

    // ---- response, for the session ----
    // nghttp2's data source: how much the next DATA frame can carry.
    ssize_t read_data(size_t length, uint32_t* data_flags);
    // The frame was made: its `length` body bytes move to the connection's output.
    void move_data(size_t length, transport::OutputQueue& to);
    // Its handler waits for its output to be written, and it now is.
    bool drained_and_waited_for();
    void tell_drained();
    // Closed, and nothing of it is left in the connection's output: it can go.
    bool finished() const;
    // The connection closes: the handler hears it, the request is counted.
    void on_connection_closed();
    // When the client's input for this stream is overdue (uv_hrtime ns;
    // UINT64_MAX: nothing is awaited from it): the rest of its header block
    // header_timeout after it began, its next body bytes body_timeout after
    // the last ones, while a handler or the location's start waits for them.
    uint64_t input_deadline_ns(const config::ServerConfig& limits) const;
    bool head_incomplete() const { return !head_complete_ && !closed_; }
    // The body stalled: 408, or a reset once the response began.
    void fail_stalled_body();
    bool has_pending_body() const { return !body_.empty(); }
    // A response ended before the request body did: the client can stop sending.
    bool request_body_unfinished() const { return !r_.body_complete; }
    bool handler_started() const { return r_.handler_started; }
    // True the first time: the session charges each reset stream once.
    bool take_reset_charge() { return !std::exchange(reset_charged_, true); }

    // ---- http::Exchange ----
    const http::Request& request() const override { return request_; }
    const config::LocationConfig& location() const override;
    void begin_response(int status, uint64_t content_length) override;
    void begin_streamed_response(int status) override;
    void add_header(std::string_view name, std::string_view value) override;
    void send_body(std::string_view bytes) override;
    void send_body_pieces(std::span<const std::string_view> pieces, bool last) override;
    void send_owned_body(std::string_view bytes, std::shared_ptr<const void> owner) override;
    void send_file(int fd, off_t offset, uint64_t length, std::shared_ptr<const void> owner) override;
    void hand_over_buffer(core::BufferPool& pool, char* block) override;
    void end_response() override;
    void abort() override;
    void resume_request_body() override;
    bool output_pending() const override;
    // No tunnels over HTTP/2 (an Upgrade header is not allowed in it, RFC
    // 9113 8.2.2): nothing ever asks for one.
    void switch_protocols() override {}

private:
    void build_request();
    void serve();
    void tell_request_complete();
    // Submits HEADERS; `with_body`: DATA frames follow (else END_STREAM on them).
    void commit_head(bool with_body);
    // More body, or its end: nghttp2 is asked for frames again.
    void body_queued();
    void record(int status);

    Session& session_;
    int32_t id_;
    // Location, timeline, flags and the record (http/request_state.hpp).
    http::RequestState r_;

    // Request: every view of request_ points into fields_, a block of the
    // worker's buffer pool (at least max_header_bytes, so the whole list as
    // the session limits it fits, and nothing moves).
    http::Request request_;
    char* fields_ = nullptr;
    size_t fields_size_ = 0;
    size_t header_list_size_ = 0;  // as RFC 9113 6.5.2 counts it
    std::string_view method_, scheme_, authority_, path_;
    bool head_complete_ = false;
    uint64_t body_progress_ns_ = 0;  // the head's end, then each DATA payload's arrival
    std::string cookie_;     // several cookie fields joined (RFC 9113 8.2.3)
    std::string held_body_;  // DATA the listener could not take yet
    std::string body_in_delivery_;  // held DATA being handed to the listener
    bool delivering_ = false;
    bool completion_told_ = false;

    bool reset_charged_ = false;

    // Response
    char status_digits_[3];  // :status, read by nghttp2 when it makes HEADERS
    bool head_only_ = false;  // HEAD, 204, 304: no DATA whatever the handler sends
    StreamBuffers buffers_;  // request_.headers is buffers_.request_headers while it lives
    transport::OutputQueue body_;  // queued, not yet framed
    uint64_t body_bytes_ = 0;      // framed so far
    uint64_t last_byte_at_ = 0;    // the session's output_end() after its last frame
    bool deferred_ = false;        // nghttp2 waits for resume_data
    bool drain_wanted_ = false;    // a send left output pending: the handler waits
    std::shared_ptr<const void> owner_;
    core::BufferPool* handed_over_pool_ = nullptr;
    char* handed_over_block_ = nullptr;

    bool closed_ = false;  // by nghttp2
};

}  // namespace portico::http2
