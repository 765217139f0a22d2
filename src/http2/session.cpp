#include "http2/session.hpp"

#include <algorithm>
#include <cstring>

#include "core/log.hpp"
#include "core/small_blocks.hpp"


namespace portico::http2 {

namespace {

// Frames waiting in the output beyond this are not asked for yet: a slow
// reader holds at most this much of the session's memory (plus the
// streams' own queued bodies, which their handlers bound).
constexpr uint64_t output_high_water = 64 * 1024;

// Rapid reset (CVE-2023-44487): a client that resets more streams than a
// burst of this many, refilled at this rate per second, gets GOAWAY and no
// more of its input is read. Each reset stream may have cost a handler
// start (an upstream request); this bounds that work per connection.
// (nghttp2 has the same limit built in, but goes on reading the input in
// hand after its GOAWAY, starting the streams in it.)
constexpr double reset_burst = 200;
constexpr double resets_per_second = 50;

// PING and SETTINGS cost us an acknowledgement each; a browser sends a
// few per connection. More than this in one second is a flood.
constexpr uint32_t max_control_frames_per_second = 200;

// The connection's receive window: bytes are given back as soon as they
// arrive (the streams' own windows do the back-pressure), so one stream's
// held body never stalls the others.
constexpr int32_t connection_window = 1 << 20;

// nghttp2 allocates a stream, its frames and its header copies per
// request: from the worker's recycled small blocks (core/small_blocks.hpp).
nghttp2_mem memory_from_small_blocks = {
    nullptr,
    [](size_t size, void*) { return core::small_blocks::allocate(size); },
    [](void* block, void*) { core::small_blocks::release(block); },
    [](size_t count, size_t size, void*) { return core::small_blocks::allocate_zeroed(count, size); },
    [](void* block, size_t size, void*) { return core::small_blocks::reallocate(block, size); },
};

struct Callbacks {
    nghttp2_session_callbacks* callbacks = nullptr;
    ~Callbacks() { nghttp2_session_callbacks_del(callbacks); }
};

}  // namespace

// ---- the arena -----------------------------------------------------------------

std::string_view Session::FrameArena::copy(const uint8_t* bytes, size_t size) {
    char* at;
    if (size > block_size) {
        large_.push_back(std::make_unique<char[]>(size));
        at = large_.back().get();
    } else {
        if (blocks_.empty() || used_ + size > block_size) {
            blocks_.push_back(std::make_unique<char[]>(block_size));
            used_ = 0;
        }
        at = blocks_.back().get() + used_;
        used_ += size;
    }
    std::memcpy(at, bytes, size);
    return {at, size};
}

void Session::FrameArena::reset() {
    if (blocks_.size() > 1) blocks_.erase(blocks_.begin() + 1, blocks_.end());
    large_.clear();
    used_ = 0;
}

// ---- life cycle ----------------------------------------------------------------

Session::Session(http::ServerContext& server, Carrier& carrier)
    : server_(server), carrier_(carrier) {
    static const Callbacks callbacks = [] {
        Callbacks made;
        nghttp2_session_callbacks_new(&made.callbacks);
        nghttp2_session_callbacks* c = made.callbacks;
        nghttp2_session_callbacks_set_send_callback(c, on_send);
        nghttp2_session_callbacks_set_send_data_callback(c, on_send_data);
        nghttp2_session_callbacks_set_on_begin_frame_callback(c, on_begin_frame);
        nghttp2_session_callbacks_set_on_begin_headers_callback(c, on_begin_headers);
        nghttp2_session_callbacks_set_on_header_callback(c, on_header);
        nghttp2_session_callbacks_set_on_frame_recv_callback(c, on_frame_received);
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(c, on_data_chunk);
        nghttp2_session_callbacks_set_on_frame_send_callback(c, on_frame_sent);
        nghttp2_session_callbacks_set_on_stream_close_callback(c, on_stream_closed);
        return made;
    }();
    nghttp2_option* option = nullptr;
    nghttp2_option_new(&option);
    // Stream windows are given back only once a handler took the bytes.
    nghttp2_option_set_no_auto_window_update(option, 1);
    // CONTINUATION flood (CVE-2024-27316): a header block in more frames
    // than this ends the session (nghttp2's default, said here).
    nghttp2_option_set_max_continuations(option, 8);
    if (nghttp2_session_server_new3(&session_, callbacks.callbacks, this, option,
                                    &memory_from_small_blocks) != 0) {
        session_ = nullptr;
        ended_ = true;
    }
    nghttp2_option_del(option);
    if (!session_) return;
    const config::ServerConfig& limits = server.config.server;
    // No MAX_CONCURRENT_STREAMS here: nghttp2 would end the connection of a
    // client that exceeds it (GOAWAY PROTOCOL_ERROR) where RFC 9113 5.1.2
    // lets us refuse the one stream. We add the setting to the frame as it
    // goes out (on_send) and refuse streams past it ourselves (on_begin_headers).
    nghttp2_settings_entry settings[] = {
        {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, static_cast<uint32_t>(limits.max_header_bytes)},
        {NGHTTP2_SETTINGS_NO_RFC7540_PRIORITIES, 1},
    };
    nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, settings, std::size(settings));
    nghttp2_session_set_local_window_size(session_, NGHTTP2_FLAG_NONE, 0, connection_window);
    reset_tokens_ = reset_burst;
    reset_refill_ms_ = uv_now(server.loop);
    server_.counters.http2_session_started();
}

Session::~Session() {
    for (Stream* stream : streams_) delete stream;
    nghttp2_session_del(session_);
}

void Session::connection_closed() {
    ended_ = true;
    for (Stream* stream : streams_) stream->on_connection_closed();
}

void Session::drain() {
    if (ended_ || draining_) return;
    draining_ = true;
    goaway_last_stream_ = nghttp2_session_get_last_proc_stream_id(session_);
    nghttp2_submit_goaway(session_, NGHTTP2_FLAG_NONE, goaway_last_stream_, NGHTTP2_NO_ERROR,
                          nullptr, 0);
    if (!receiving_) send();
}

void Session::terminate(uint32_t code, const char* why) {
    char ip[INET6_ADDRSTRLEN];
    log::info("HTTP/2 client {} {}: GOAWAY and close",
              http::format_ip(carrier_.peer(), ip, sizeof ip), why);
    nghttp2_session_terminate_session(session_, code);
    terminated_ = true;
}

StreamBuffers Session::take_buffers() {
    if (spare_buffers_.empty()) return {};
    StreamBuffers buffers = std::move(spare_buffers_.back());
    spare_buffers_.pop_back();
    return buffers;
}

void Session::keep_buffers(StreamBuffers&& buffers) {
    if (spare_buffers_.size() >= server_.config.http2.max_concurrent_streams) return;
    buffers.request_headers.clear();
    buffers.response_fields.clear();
    buffers.field_lengths.clear();
    spare_buffers_.push_back(std::move(buffers));
}

// ---- input ---------------------------------------------------------------------

void Session::receive(const char* bytes, size_t size) {
    if (ended_ || terminated_) return;
    release_finished_streams();
    receiving_ = true;
    ssize_t used = 0;
    // nghttp2 takes the input up to each DATA frame's header, which is
    // checked against the streams as they are then (data_on_closed_stream).
    for (size_t from = 0; from < size && used >= 0 && !terminated_;) {
        FrameScanner::Scan scan = scanner_.next(bytes, from, size, NGHTTP2_DATA);
        if (scan.found && data_on_closed_stream(scan.header.stream_id)) break;
        used = nghttp2_session_mem_recv(session_, reinterpret_cast<const uint8_t*>(bytes + from),
                                        scan.end - from);
        from = scan.end;
    }
    receiving_ = false;
    if (used < 0) {
        log::debug("HTTP/2 input refused: {}", nghttp2_strerror(static_cast<int>(used)));
        // Not a client of ours (a bad preface), or one that does not read
        // what it asks for (acknowledgements piling up): nothing to tell it.
        if (used == NGHTTP2_ERR_BAD_CLIENT_MAGIC || used == NGHTTP2_ERR_FLOODED) {
            ended_ = true;
            carrier_.end_session();
            return;
        }
        // A callback that refused the input (a flood) queued its GOAWAY
        // already; nghttp2 keeps the first one.
        if (used == NGHTTP2_ERR_TOO_MANY_CONTINUATIONS)
            terminate(NGHTTP2_ENHANCE_YOUR_CALM, "sent a CONTINUATION flood");
        else
            nghttp2_session_terminate_session(session_, NGHTTP2_PROTOCOL_ERROR);
    }
    send();
}

Stream* Session::stream(int32_t id) {
    return static_cast<Stream*>(nghttp2_session_get_stream_user_data(session_, id));
}

bool Session::reset_flood() {
    uint64_t now = uv_now(server_.loop);
    reset_tokens_ = std::min(reset_burst, reset_tokens_ + static_cast<double>(now - reset_refill_ms_) *
                                                           resets_per_second / 1000.0);
    reset_refill_ms_ = now;
    if (reset_tokens_ < 1) return true;
    reset_tokens_ -= 1;
    return false;
}

// Each stream is charged once, whichever side reset it: a client that
// makes the server reset its streams (a content-length its DATA breaks,
// CVE-2025-8671 "MadeYouReset") costs us the same as one that resets them.
bool Session::charge_reset(Stream* stream) {
    if (stream && !stream->take_reset_charge()) return false;
    return reset_flood();
}

void Session::remember_reset(int32_t stream_id) {
    recently_reset_[recently_reset_next_++ % recently_reset_.size()] = stream_id;
}

bool Session::recently_reset(int32_t stream_id) const {
    return std::find(recently_reset_.begin(), recently_reset_.end(), stream_id) !=
           recently_reset_.end();
}

bool Session::control_frame_flood() {
    uint64_t now = uv_now(server_.loop);
    if (now - control_window_start_ms_ >= 1000) {
        control_window_start_ms_ = now;
        control_frames_ = 0;
    }
    return ++control_frames_ > max_control_frames_per_second;
}

// RFC 9113 5.1.1: a client's new stream id is above every one it used
// before (else PROTOCOL_ERROR, as nginx answers), and a closed stream takes
// no more DATA (5.1, STREAM_CLOSED: data_on_closed_stream). nghttp2 ignores
// both once it has forgotten the stream; we end the connection, except for
// frames that were in flight when we reset the stream (5.1, "closed").
int Session::on_begin_frame(nghttp2_session*, const nghttp2_frame_hd* hd, void* self) {
    auto& session = *static_cast<Session*>(self);
    if (hd->type != NGHTTP2_HEADERS) return 0;
    int32_t id = hd->stream_id;
    if (id > session.highest_client_stream_ && id % 2 == 1) {
        session.highest_client_stream_ = id;
        return 0;  // a new stream
    }
    if (!session.closed_stream(id)) return 0;
    session.terminate(NGHTTP2_PROTOCOL_ERROR, "sent HEADERS on a closed or lower stream id");
    return NGHTTP2_ERR_CALLBACK_FAILURE;
}

// A stream id the client used before, closed now, and not one we reset
// lately or refused by our GOAWAY (frames in flight then are no fault:
// RFC 9113 5.1 and 6.8, a client may have sent a request's DATA before it
// saw the GOAWAY that left the request out).
bool Session::closed_stream(int32_t id) const {
    if (id <= 0 || id % 2 == 0 || id > highest_client_stream_ || id > goaway_last_stream_)
        return false;
    nghttp2_stream* known = nghttp2_session_find_stream(session_, id);
    if (known && nghttp2_stream_get_state(known) != NGHTTP2_STREAM_STATE_CLOSED) return false;
    return !recently_reset(id);
}

// nghttp2 drops DATA on a stream it has forgotten without telling us.
bool Session::data_on_closed_stream(int32_t id) {
    if (!closed_stream(id)) return false;
    terminate(NGHTTP2_STREAM_CLOSED, "sent DATA on a closed stream");
    return true;
}

int Session::on_begin_headers(nghttp2_session*, const nghttp2_frame* frame, void* self) {
    auto& session = *static_cast<Session*>(self);
    if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
    // Past the reset budget no new stream starts a handler, even from the
    // input already in hand.
    if (session.terminated_) return NGHTTP2_ERR_CALLBACK_FAILURE;
    if (session.open_streams_ >= session.server_.config.http2.max_concurrent_streams) {
        // RFC 9113 5.1.2: REFUSED_STREAM, the client may retry it. No stream
        // of ours: its fields and DATA are dropped. A refusal costs us like
        // a reset, so it draws on the same bucket.
        nghttp2_submit_rst_stream(session.session_, NGHTTP2_FLAG_NONE, frame->hd.stream_id,
                                  NGHTTP2_REFUSED_STREAM);
        if (session.reset_flood()) {
            session.terminate(NGHTTP2_ENHANCE_YOUR_CALM, "opened streams past its limit too often");
            return NGHTTP2_ERR_CALLBACK_FAILURE;
        }
        return 0;
    }
    ++session.open_streams_;
    auto* stream = new Stream(session, frame->hd.stream_id);
    session.streams_.push_back(stream);
    nghttp2_session_set_stream_user_data(session.session_, frame->hd.stream_id, stream);
    session.server_.counters.http2_stream_opened();
    // keepalive_requests holds over HTTP/2 too (nginx's GOAWAY at that
    // many): the client finishes this stream and goes on a new connection.
    if (++session.streams_opened_ == session.server_.config.server.keepalive_requests) session.drain();
    return 0;
}

int Session::on_header(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name,
                       size_t name_length, const uint8_t* value, size_t value_length, uint8_t,
                       void* self) {
    auto& session = *static_cast<Session*>(self);
    Stream* stream = session.stream(frame->hd.stream_id);
    if (!stream) return 0;
    if (!stream->add_request_field({reinterpret_cast<const char*>(name), name_length},
                                   {reinterpret_cast<const char*>(value), value_length})) {
        // An HPACK bomb: a small block that expands past the limit.
        session.terminate(NGHTTP2_ENHANCE_YOUR_CALM, "sent a header list over max_header_bytes");
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    }
    return 0;
}

int Session::on_frame_received(nghttp2_session*, const nghttp2_frame* frame, void* self) {
    auto& session = *static_cast<Session*>(self);
    switch (frame->hd.type) {
    case NGHTTP2_HEADERS:
        if (Stream* stream = session.stream(frame->hd.stream_id)) {
            bool end_stream = frame->hd.flags & NGHTTP2_FLAG_END_STREAM;
            if (frame->headers.cat == NGHTTP2_HCAT_REQUEST) stream->on_head_complete(end_stream);
            else if (end_stream) stream->on_body_end();  // trailers
        }
        break;
    case NGHTTP2_DATA:
        if (frame->hd.flags & NGHTTP2_FLAG_END_STREAM)
            if (Stream* stream = session.stream(frame->hd.stream_id)) stream->on_body_end();
        break;
    case NGHTTP2_RST_STREAM:
        session.server_.counters.http2_stream_reset(metrics::ResetSide::client);
        if (session.charge_reset(session.stream(frame->hd.stream_id))) {
            session.terminate(NGHTTP2_ENHANCE_YOUR_CALM, "reset streams faster than allowed (rapid reset)");
            return NGHTTP2_ERR_CALLBACK_FAILURE;
        }
        break;
    case NGHTTP2_PING:
    case NGHTTP2_SETTINGS:
        if (!(frame->hd.flags & NGHTTP2_FLAG_ACK) && session.control_frame_flood()) {
            session.terminate(NGHTTP2_ENHANCE_YOUR_CALM, "sent a PING or SETTINGS flood");
            return NGHTTP2_ERR_CALLBACK_FAILURE;
        }
        break;
    default:
        break;
    }
    return 0;
}

int Session::on_data_chunk(nghttp2_session*, uint8_t, int32_t stream_id, const uint8_t* data,
                           size_t length, void* self) {
    auto& session = *static_cast<Session*>(self);
    nghttp2_session_consume_connection(session.session_, length);
    Stream* stream = session.stream(stream_id);
    if (!stream) {
        nghttp2_session_consume_stream(session.session_, stream_id, length);
        return 0;
    }
    stream->on_body_data({reinterpret_cast<const char*>(data), length});
    return 0;
}

int Session::on_stream_closed(nghttp2_session*, int32_t stream_id, uint32_t error_code, void* self) {
    auto& session = *static_cast<Session*>(self);
    if (Stream* stream = session.stream(stream_id)) {
        // A reset after the handler started (an upstream request, perhaps)
        // is charged to the client whoever sent it; a client's own
        // RST_STREAM was charged when it came.
        if (error_code != NGHTTP2_NO_ERROR && stream->handler_started() &&
            session.charge_reset(stream) && !session.terminated_)
            session.terminate(
                NGHTTP2_ENHANCE_YOUR_CALM,
                "had streams reset faster than allowed (rapid reset, its own or provoked)");
        --session.open_streams_;
        nghttp2_session_set_stream_user_data(session.session_, stream_id, nullptr);
        stream->on_closed(error_code);
    }
    return 0;
}

// ---- output --------------------------------------------------------------------

ssize_t Session::on_send(nghttp2_session*, const uint8_t* data, size_t length, int, void* self) {
    auto& session = *static_cast<Session*>(self);
    if (session.output_.pending_bytes() >= output_high_water) return NGHTTP2_ERR_WOULDBLOCK;
    if (!session.settings_sent_) {
        session.settings_sent_ = true;
        session.output_.push_memory(session.with_stream_limit(data, length));
        return static_cast<ssize_t>(length);
    }
    session.output_.push_memory(session.arena_.copy(data, length));
    return static_cast<ssize_t>(length);
}

// The server's first frame is its SETTINGS (the connection preface, RFC
// 9113 3.4), whole in one call: copied with a MAX_CONCURRENT_STREAMS entry
// added (see the constructor).
std::string_view Session::with_stream_limit(const uint8_t* frame, size_t length) {
    constexpr size_t header = 9, entry = 6;
    bool settings = length >= header && frame[3] == NGHTTP2_SETTINGS && frame[4] == 0 &&
                    (size_t{frame[0]} << 16 | size_t{frame[1]} << 8 | frame[2]) == length - header;
    if (!settings) return arena_.copy(frame, length);
    uint8_t patched[header + 64];
    if (length + entry > sizeof patched) return arena_.copy(frame, length);
    std::memcpy(patched, frame, length);
    size_t payload = length - header + entry;
    patched[0] = static_cast<uint8_t>(payload >> 16);
    patched[1] = static_cast<uint8_t>(payload >> 8);
    patched[2] = static_cast<uint8_t>(payload);
    uint32_t limit = server_.config.http2.max_concurrent_streams;
    uint8_t* added = patched + length;
    added[0] = 0;
    added[1] = NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS;
    added[2] = static_cast<uint8_t>(limit >> 24);
    added[3] = static_cast<uint8_t>(limit >> 16);
    added[4] = static_cast<uint8_t>(limit >> 8);
    added[5] = static_cast<uint8_t>(limit);
    return arena_.copy(patched, length + entry);
}

int Session::on_send_data(nghttp2_session*, nghttp2_frame* frame, const uint8_t* frame_header,
                          size_t length, nghttp2_data_source* source, void* self) {
    auto& session = *static_cast<Session*>(self);
    if (session.output_.pending_bytes() >= output_high_water) return NGHTTP2_ERR_WOULDBLOCK;
    // No padding is ever asked for (no select_padding callback).
    (void)frame;
    session.queue_data_frame(frame_header, *static_cast<Stream*>(source->ptr), length);
    return 0;
}

void Session::queue_data_frame(const uint8_t* frame_header, Stream& stream, size_t length) {
    output_.push_memory(arena_.copy(frame_header, 9));
    stream.move_data(length, output_);
}

int Session::on_frame_sent(nghttp2_session*, const nghttp2_frame* frame, void* self) {
    auto& session = *static_cast<Session*>(self);
    switch (frame->hd.type) {
    case NGHTTP2_GOAWAY:
        session.server_.counters.http2_goaway_sent();
        break;
    case NGHTTP2_RST_STREAM:
        session.server_.counters.http2_stream_reset(metrics::ResetSide::server);
        session.remember_reset(frame->hd.stream_id);
        break;
    case NGHTTP2_HEADERS:
    case NGHTTP2_DATA:
        // RFC 9113 8.1: a response complete before its request tells the
        // client to stop sending the rest (a 413, a file served to a POST).
        if (frame->hd.flags & NGHTTP2_FLAG_END_STREAM)
            if (Stream* stream = session.stream(frame->hd.stream_id);
                stream && stream->request_body_unfinished())
                nghttp2_submit_rst_stream(session.session_, NGHTTP2_FLAG_NONE, frame->hd.stream_id,
                                          NGHTTP2_NO_ERROR);
        break;
    default:
        break;
    }
    return 0;
}

void Session::send() {
    if (ended_) return;
    // Frames are asked for once the input in hand is processed (nghttp2 is
    // not reentrant), and a handler writing from a drained callback joins
    // the loop in progress.
    if (receiving_ || sending_) {
        send_again_ = true;
        return;
    }
    sending_ = true;
    bool blocked = output_blocked_;
    do {
        send_again_ = false;
        uint64_t end_before = output_end();
        if (int failed = nghttp2_session_send(session_); failed != 0) {
            log::debug("HTTP/2 output failed: {}", nghttp2_strerror(failed));
            sending_ = false;
            ended_ = true;
            carrier_.end_session();
            return;
        }
        blocked = false;
        if (!output_.empty()) {
            transport::OutputQueue::FlushResult result = carrier_.write(output_, written_);
            if (result == transport::OutputQueue::FlushResult::failed) {
                sending_ = false;
                ended_ = true;
                carrier_.end_session();
                return;
            }
            blocked = result == transport::OutputQueue::FlushResult::would_block;
        }
        if (output_.empty()) arena_.reset();
        if (drain_watched_) tell_drained_streams();
        // nghttp2 stopped at the high-water mark, and the socket took it all.
        bool produced = output_end() != end_before;
        if (produced && !blocked && output_.empty() && nghttp2_session_want_write(session_))
            send_again_ = true;
    } while (send_again_ && !blocked && !ended_);
    sending_ = false;
    if (ended_) return;
    if (blocked != output_blocked_) {
        output_blocked_ = blocked;
        carrier_.set_output_blocked(blocked);
    }
    if (!nghttp2_session_want_read(session_) && !nghttp2_session_want_write(session_) &&
        output_.empty()) {
        ended_ = true;
        carrier_.end_session();
        return;
    }
    update_timer();
}

void Session::on_writable() {
    release_finished_streams();
    send();
}

void Session::tell_drained_streams() {
    drain_watched_ = false;
    // By index: a handler told here may end its response (the stream stays
    // listed until release_finished_streams) but never opens a stream.
    for (size_t i = 0; i < streams_.size(); ++i) {
        Stream* stream = streams_[i];
        if (stream->drained_and_waited_for()) stream->tell_drained();
        if (ended_) return;
    }
}

void Session::release_finished_streams() {
    auto finished = [](Stream* stream) {
        if (!stream->finished()) return false;
        delete stream;
        return true;
    };
    streams_.erase(std::remove_if(streams_.begin(), streams_.end(), finished), streams_.end());
}

}  // namespace portico::http2
