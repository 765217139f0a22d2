// One HTTP/2 connection's protocol state, with nghttp2 doing the framing,
// HPACK, flow control and the flood limits (libnghttp2, Debian's).
//
// The session sits on the transport its ClientConnection owns (socket or
// TLS, the poll registration, the timer): the connection reads and hands
// the bytes to receive(); the frames nghttp2 makes wait in the session's
// output queue, which the connection writes (Carrier::write), so h2
// output goes out with the same writev/sendfile/TLS code as HTTP/1.1.
//
// Output design: DATA frames are "no copy" (nghttp2's NGHTTP2_DATA_FLAG_NO_COPY):
// nghttp2 decides a frame's length by the windows, and we queue its 9-byte
// header followed by the stream's own pieces (a view of the handler's
// bytes, or a file range that goes out with sendfile over cleartext), so
// body bytes are never copied into a frame buffer. Other frames are copied
// into a small arena that lives until the output is written. nghttp2 is
// asked for frames until the output holds `output_high_water` bytes: more
// would only sit in memory behind a slow client.
//
// Each stream is an http::Exchange (http2/stream.hpp): handlers serve it
// exactly as they serve an HTTP/1.1 request.
#pragma once

#include <nghttp2/nghttp2.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "transport/output_queue.hpp"
#include "transport/transport.hpp"
#include "http/peer_address.hpp"
#include "http/server_context.hpp"
#include "http2/frame_scanner.hpp"
#include "http2/stream.hpp"

namespace portico::http2 {

// What the session needs from the connection that carries it.
class Carrier {
public:
    // Writes what the client takes of `output` now; `sent` adds what was written.
    virtual transport::OutputQueue::FlushResult write(transport::OutputQueue& output,
                                                      uint64_t& sent) = 0;
    // Whether writability must be watched (some output is waiting).
    virtual void set_output_blocked(bool blocked) = 0;
    virtual void arm_timer(config::Duration timeout) = 0;
    virtual void disarm_timer() = 0;
    // The session is over: the connection closes.
    virtual void end_session() = 0;
    virtual const http::PeerAddress& peer() const = 0;
    // Plain or TLS, for the request's scheme and the access log.
    virtual const transport::Transport& transport() const = 0;

protected:
    ~Carrier() = default;
};

class Session {
public:
    Session(http::ServerContext& server, Carrier& carrier);
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    // Bytes from the client (the connection preface first), then the
    // frames they caused are written.
    void receive(const char* bytes, size_t size);
    // The socket is writable again.
    void on_writable();
    // Asks nghttp2 for frames and writes them (a stream has more to send).
    // Streams that are done are freed only on the next event from the loop
    // (receive, on_writable, on_timeout), never under a stream's own call,
    // so a handler can still touch its exchange after ending it.
    void send();
    void on_timeout();
    // Worker drain: GOAWAY; the streams already open finish, then the
    // connection closes.
    void drain();
    // The connection is closing: every open stream's handler hears it.
    void connection_closed();

    http::ServerContext& server() { return server_; }
    Carrier& carrier() { return carrier_; }
    nghttp2_session* nghttp2() { return session_; }
    // Where the output queue ends, counted in bytes since the connection
    // began: a stream's bytes are all written once written() reaches the
    // position it ended at.
    uint64_t output_end() const { return written_ + output_.pending_bytes(); }
    uint64_t written() const { return written_; }
    // The DATA frame header nghttp2 made, then `length` body bytes of the stream.
    void queue_data_frame(const uint8_t* frame_header, Stream& stream, size_t length);
    // Where a stream builds its response's field list (nghttp2 copies the
    // list, not the bytes: see field() in stream.cpp).
    std::vector<nghttp2_nv>& header_scratch() { return header_scratch_; }
    // A stream's containers: a previous stream's, emptied, when there is one.
    StreamBuffers take_buffers();
    void keep_buffers(StreamBuffers&& buffers);
    // A stream asks to be told when its output is written (Exchange::on_output_drained).
    void watch_drain() { drain_watched_ = true; }

private:
    // Copies of non-DATA frames, kept until the output queue has written them.
    class FrameArena {
    public:
        std::string_view copy(const uint8_t* bytes, size_t size);
        void reset();  // everything in it was written

    private:
        static constexpr size_t block_size = 16 * 1024;
        std::vector<std::unique_ptr<char[]>> blocks_;
        std::vector<std::unique_ptr<char[]>> large_;  // frames bigger than a block
        size_t used_ = 0;  // in blocks_.back()
    };

    static ssize_t on_send(nghttp2_session*, const uint8_t* data, size_t length, int flags, void* self);
    static int on_send_data(nghttp2_session*, nghttp2_frame* frame, const uint8_t* frame_header,
                            size_t length, nghttp2_data_source* source, void* self);
    static int on_begin_frame(nghttp2_session*, const nghttp2_frame_hd* hd, void* self);
    static int on_begin_headers(nghttp2_session*, const nghttp2_frame* frame, void* self);
    static int on_header(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name,
                         size_t name_length, const uint8_t* value, size_t value_length,
                         uint8_t flags, void* self);
    static int on_frame_received(nghttp2_session*, const nghttp2_frame* frame, void* self);
    static int on_data_chunk(nghttp2_session*, uint8_t flags, int32_t stream_id, const uint8_t* data,
                             size_t length, void* self);
    static int on_frame_sent(nghttp2_session*, const nghttp2_frame* frame, void* self);
    static int on_stream_closed(nghttp2_session*, int32_t stream_id, uint32_t error_code, void* self);

    Stream* stream(int32_t id);
    // The first SETTINGS frame, with our MAX_CONCURRENT_STREAMS added.
    std::string_view with_stream_limit(const uint8_t* frame, size_t length);
    // A client that sends PING or SETTINGS faster than a client has reason to.
    bool control_frame_flood();
    // A client that resets streams faster than the rapid-reset limit allows.
    bool reset_flood();
    // reset_flood() for a stream that ends in a reset, once per stream.
    bool charge_reset(Stream* stream);
    // Streams we reset lately: frames the client sent before it knew are no fault.
    void remember_reset(int32_t stream_id);
    bool recently_reset(int32_t stream_id) const;
    bool closed_stream(int32_t id) const;
    bool data_on_closed_stream(int32_t id);
    // Ends the session for a protocol error or abuse: GOAWAY with `code`, then the close.
    void terminate(uint32_t code, const char* why);
    void tell_drained_streams();
    void release_finished_streams();
    void update_timer();

    http::ServerContext& server_;
    Carrier& carrier_;
    nghttp2_session* session_ = nullptr;
    transport::OutputQueue output_;
    FrameArena arena_;
    uint64_t written_ = 0;
    std::vector<nghttp2_nv> header_scratch_;
    std::vector<Stream*> streams_;  // open, or closed with bytes still in output_
    std::vector<StreamBuffers> spare_buffers_;  // at most max_concurrent_streams
    bool receiving_ = false;  // inside nghttp2_session_mem_recv: no send() now
    bool sending_ = false;
    bool send_again_ = false;
    bool drain_watched_ = false;
    bool output_blocked_ = false;
    bool ended_ = false;
    bool draining_ = false;
    uint32_t streams_opened_ = 0;
    uint32_t open_streams_ = 0;  // taken, not yet closed by nghttp2
    bool settings_sent_ = false;
    // Control frames (PING, SETTINGS) in the current second, for the flood limit.
    uint64_t control_window_start_ms_ = 0;
    double reset_tokens_ = 0;  // a token bucket, refilled with loop time
    uint64_t reset_refill_ms_ = 0;
    uint32_t control_frames_ = 0;
    bool terminated_ = false;  // GOAWAY for an error queued: no more input is taken
    int32_t highest_client_stream_ = 0;
    // The last stream our drain's GOAWAY accepted: streams above it were
    // refused, and their frames still in flight are ignored.
    int32_t goaway_last_stream_ = INT32_MAX;
    FrameScanner scanner_;
    std::array<int32_t, 32> recently_reset_{};
    size_t recently_reset_next_ = 0;
    // When the timer last saw output move: a client that reads nothing (or
    // keeps every window shut) for send_timeout is closed.
    uint64_t written_at_timer_ = 0;
    bool stall_timer_armed_ = false;
};

}  // namespace portico::http2
