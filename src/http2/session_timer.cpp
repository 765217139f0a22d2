// The time half of Session: its one timer, and what happens when it fires.
#include <uv.h>

#include <algorithm>

#include "core/log.hpp"
#include "http2/session.hpp"

namespace portico::http2 {

// ---- time ----------------------------------------------------------------------

// One timer per connection, set for the nearest of: send_timeout without
// output progress (a client that reads nothing or keeps its windows shut);
// a header block not complete header_timeout after it began; a request body
// without a byte for body_timeout; keepalive_timeout without any stream.
// Deadlines come from each stream's own times, not from this call, so a
// client sending PINGs does not push them back. Handlers at work have their
// own timeouts (the proxy's).
void Session::update_timer() {
    const config::ServerConfig& limits = server_.config.server;
    bool output_waits = output_blocked_;
    bool open = false;
    uint64_t deadline_ns = UINT64_MAX;
    for (Stream* stream : streams_) {
        if (stream->finished()) continue;  // released on the next event
        open = true;
        output_waits |= stream->has_pending_body();
        deadline_ns = std::min(deadline_ns, stream->input_deadline_ns(limits));
    }
    if (output_waits) {
        if (written_ != written_at_timer_ || !stall_timer_armed_) {
            written_at_timer_ = written_;
            stall_timer_armed_ = true;
            carrier_.arm_timer(limits.send_timeout);
        }
        return;
    }
    stall_timer_armed_ = false;
    if (!open) {
        carrier_.arm_timer(limits.keepalive_timeout);
    } else if (deadline_ns != UINT64_MAX) {
        uint64_t now = uv_hrtime();
        uint64_t left_ms = deadline_ns > now ? (deadline_ns - now + 999'999) / 1'000'000 : 0;
        carrier_.arm_timer(config::Duration{static_cast<int64_t>(left_ms)});
    } else {
        carrier_.disarm_timer();
    }
}

void Session::on_timeout() {
    if (ended_) return;
    release_finished_streams();
    if (streams_.empty()) {
        // Idle for keepalive_timeout: say goodbye properly.
        nghttp2_session_terminate_session(session_, NGHTTP2_NO_ERROR);
        send();
        if (!ended_) {
            ended_ = true;
            carrier_.end_session();
        }
        return;
    }
    if (stall_timer_armed_) {
        log::debug("closing an HTTP/2 client that read nothing for send_timeout");
        ended_ = true;
        carrier_.end_session();
        return;
    }
    const config::ServerConfig& limits = server_.config.server;
    uint64_t now = uv_hrtime();
    for (Stream* stream : streams_) {
        if (stream->finished() || stream->input_deadline_ns(limits) > now) continue;
        if (stream->head_incomplete()) {
            // A header block in progress holds the whole connection (no
            // other frame may come between its pieces): nothing to answer.
            terminate(NGHTTP2_PROTOCOL_ERROR, "left a header block incomplete for header_timeout");
            break;
        }
        stream->fail_stalled_body();
    }
    send();
}

}  // namespace portico::http2
