#include "http2/stream.hpp"

#include <llhttp.h>
#include <uv.h>

#include <algorithm>
#include <charconv>
#include <cstring>

#include "http/header_text.hpp"
#include "http/location_headers.hpp"
#include "http/request_record.hpp"
#include "http/request_routing.hpp"
#include "http/status.hpp"
#include "http2/session.hpp"

namespace portico::http2 {

namespace {

// RFC 9113 8.2.2: connection-specific fields have no meaning in HTTP/2 and
// make a client treat the response as malformed.
bool is_connection_specific(std::string_view name) {
    using http::equals_ignore_case;
    // By length first: most names are none of these lengths.
    switch (name.size()) {
    case 7: return equals_ignore_case(name, "upgrade");
    case 10: return equals_ignore_case(name, "connection") || equals_ignore_case(name, "keep-alive");
    case 16: return equals_ignore_case(name, "proxy-connection");
    case 17: return equals_ignore_case(name, "transfer-encoding");
    default: return false;
    }
}

// llhttp's method code for a method name, as an HTTP/1.1 request gets it;
// a method llhttp does not know is neither GET nor HEAD to the handlers.
uint8_t method_code(std::string_view name) {
#define PORTICO_METHOD_CODE(number, id, text) \
    if (name == #text) return static_cast<uint8_t>(number);
    HTTP_ALL_METHOD_MAP(PORTICO_METHOD_CODE)
#undef PORTICO_METHOD_CODE
    return UINT8_MAX;
}

// A response field nghttp2 does not copy: the bytes stay in the stream
// (its status digits and response_fields) until the stream is released,
// which is after nghttp2 closed it, and nghttp2 reads them only while
// making the HEADERS frame of an open stream.
nghttp2_nv field(std::string_view name, std::string_view value) {
    return {reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
            reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())), name.size(), value.size(),
            NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE};
}

ssize_t read_stream_data(nghttp2_session*, int32_t, uint8_t*, size_t length, uint32_t* data_flags,
                         nghttp2_data_source* source, void*) {
    return static_cast<Stream*>(source->ptr)->read_data(length, data_flags);
}

}  // namespace

Stream::Stream(Session& session, int32_t id)
    : session_(session), id_(id), buffers_(session.take_buffers()) {
    request_state_ = &r_;
    r_.start_ns = uv_hrtime();
    r_.client = session.carrier().peer();
    request_.headers = std::move(buffers_.request_headers);
    request_.version_major = 2;
    request_.version_minor = 0;
}

Stream::~Stream() {
    buffers_.request_headers = std::move(request_.headers);
    session_.keep_buffers(std::move(buffers_));
    session_.server().buffers.release(fields_);
    if (handed_over_pool_) handed_over_pool_->release(handed_over_block_);
}

// ---- request -------------------------------------------------------------------

bool Stream::add_request_field(std::string_view name, std::string_view value) {
    // RFC 9113 6.5.2 counts 32 bytes of overhead per field.
    header_list_size_ += name.size() + value.size() + 32;
    if (header_list_size_ > session_.server().config.server.max_header_bytes) return false;
    if (head_complete_) return true;  // trailer fields are dropped, as over HTTP/1.1
    // The pool's blocks hold max_header_bytes at least, and the list
    // counted above is larger than the bytes stored.
    if (fields_ == nullptr) fields_ = session_.server().buffers.acquire();
    char* stored = fields_ + fields_size_;
    std::memcpy(stored, name.data(), name.size());
    std::memcpy(stored + name.size(), value.data(), value.size());
    fields_size_ += name.size() + value.size();
    std::string_view stored_name(stored, name.size());
    std::string_view stored_value(stored + name.size(), value.size());
    if (name.starts_with(':')) {
        if (name == ":method") method_ = stored_value;
        else if (name == ":path") path_ = stored_value;
        else if (name == ":authority") authority_ = stored_value;
        else if (name == ":scheme") scheme_ = stored_value;
        return true;
    }
    request_.headers.push_back({stored_name, stored_value});
    return true;
}

void Stream::build_request() {
    http::Request& request = request_;
    request.method_name = method_;
    request.method = method_code(method_);
    request.target = path_;
    size_t question = path_.find('?');
    request.path = path_.substr(0, question);
    if (question != std::string_view::npos) request.query = path_.substr(question + 1);
    request.host = authority_.empty() ? request.header("host") : authority_;
    http::take_connection(request, session_.carrier().transport());
    std::string_view length = request.header("content-length");
    if (!length.empty()) {
        request.has_content_length = true;
        std::from_chars(length.data(), length.data() + length.size(), request.content_length);
    }
    // RFC 9113 8.2.3: cookie crumbs become one field again for HTTP/1.1.
    size_t cookies = 0;
    for (const http::HeaderField& header : request.headers)
        if (header.name == "cookie") ++cookies;
    if (cookies > 1) {
        for (const http::HeaderField& header : request.headers) {
            if (header.name != "cookie") continue;
            if (!cookie_.empty()) cookie_ += "; ";
            cookie_ += header.value;
        }
        std::erase_if(request.headers, [](const http::HeaderField& header) { return header.name == "cookie"; });
        request.headers.push_back({"cookie", cookie_});
    }
}

uint64_t Stream::input_deadline_ns(const config::ServerConfig& limits) const {
    constexpr uint64_t ns_per_ms = 1'000'000;
    if (closed_) return UINT64_MAX;
    if (!head_complete_)
        return r_.start_ns + static_cast<uint64_t>(limits.header_timeout.count()) * ns_per_ms;
    bool body_awaited = !r_.body_complete && !r_.response_ended &&
                        (r_.listener != nullptr || (r_.location >= 0 && !r_.handler_started));
    if (!body_awaited) return UINT64_MAX;
    return body_progress_ns_ + static_cast<uint64_t>(limits.body_timeout.count()) * ns_per_ms;
}

void Stream::on_head_complete(bool end_stream) {
    head_complete_ = true;
    body_progress_ns_ = uv_hrtime();
    build_request();
    if (end_stream) {
        r_.body_complete = true;
    } else if (!request_.has_content_length) {
        // A body of unknown length: handlers frame it as they would chunks.
        request_.chunked = true;
    }
    http::ServerContext& server = session_.server();
    if (!http::is_valid_host(request_.host)) {
        respond_text(400, http::status_text(400));
        return;
    }
    if (request_.content_length > server.config.server.max_body_bytes) {
        respond_text(413, http::status_text(413));
        return;
    }
    if (!http::route_request(server, request_, *this, r_)) return;
    // The others start once the whole body is in (Handler::streams_request_body).
    if (r_.body_complete || server.serving[static_cast<size_t>(r_.location)].streams_body) serve();
}

void Stream::serve() {
    r_.handler_started = true;
    http::serve_location(session_.server(), *this, r_.location);
    // A handler that listens hears the end of a body that is already in,
    // as over HTTP/1.1 (where message_complete follows the head): the proxy
    // reuses its upstream connection only after it.
    if (r_.body_complete && !r_.body_held) tell_request_complete();
}

void Stream::on_body_data(std::string_view data) {
    r_.body_received += data.size();
    body_progress_ns_ = uv_hrtime();
    if (r_.body_received > session_.server().config.server.max_body_bytes && !r_.response_ended) {
        // Too late for a 413 once the response began: the stream is reset.
        if (http::ExchangeListener* listener = std::exchange(r_.listener, nullptr))
            listener->on_client_gone();
        if (r_.response_begun)
            abort();
        else respond_text(413, http::status_text(413));
    }
    // Nobody takes it (no listener, or the response is complete): dropped,
    // and its window given back.
    if (r_.listener == nullptr || r_.response_ended) {
        nghttp2_session_consume_stream(session_.nghttp2(), id_, data.size());
        return;
    }
    if (r_.body_held) {
        // The listener is full: kept, and its window stays shut.
        held_body_.append(data);
        return;
    }
    if (!r_.listener->on_request_body(data)) r_.body_held = true;
    nghttp2_session_consume_stream(session_.nghttp2(), id_, data.size());
}

void Stream::on_body_end() {
    r_.body_complete = true;
    if (r_.location >= 0 && !r_.handler_started && !r_.response_begun) {
        serve();
        return;
    }
    if (!r_.body_held) tell_request_complete();
}

void Stream::tell_request_complete() {
    if (completion_told_ || !r_.listener) return;
    completion_told_ = true;
    r_.listener->on_request_complete();
}

void Stream::resume_request_body() {
    if (!r_.body_held || delivering_) return;
    r_.body_held = false;
    delivering_ = true;
    while (!held_body_.empty() && !r_.body_held && r_.listener) {
        // Swapped, not moved: both strings keep their memory for the next hold.
        std::string& chunk = body_in_delivery_;
        chunk.swap(held_body_);
        held_body_.clear();
        if (!r_.listener->on_request_body(chunk)) r_.body_held = true;
        if (!closed_) nghttp2_session_consume_stream(session_.nghttp2(), id_, chunk.size());
    }
    delivering_ = false;
    if (!r_.body_held && r_.body_complete) tell_request_complete();
    session_.send();  // the window updates
}

void Stream::on_closed(uint32_t error_code) {
    closed_ = true;
    if (r_.response_ended && error_code == NGHTTP2_NO_ERROR) {
        record(r_.response_status);
        return;
    }
    // Reset by the client (or refused or malformed, by nghttp2) before the
    // response was complete: the handler stops.
    if (http::ExchangeListener* listener = std::exchange(r_.listener, nullptr))
        listener->on_client_gone();
    if (r_.response_ended)
        record(r_.response_status);
    else if (!head_complete_ && error_code == NGHTTP2_PROTOCOL_ERROR) record(400);
    else record(http::client_closed_request);
}

void Stream::on_connection_closed() {
    if (closed_) return;
    closed_ = true;
    if (http::ExchangeListener* listener = std::exchange(r_.listener, nullptr))
        listener->on_client_gone();
    record(r_.response_ended && body_.empty() ? r_.response_status : http::client_closed_request);
}

void Stream::fail_stalled_body() {
    if (!r_.response_begun) {
        if (http::ExchangeListener* listener = std::exchange(r_.listener, nullptr))
            listener->on_client_gone();
        respond_text(408, http::status_text(408));
    } else {
        abort();
    }
}

bool Stream::finished() const {
    return closed_ && r_.listener == nullptr && session_.written() >= last_byte_at_;
}

// ---- response ------------------------------------------------------------------

const config::LocationConfig& Stream::location() const {
    return session_.server().config.locations[static_cast<size_t>(r_.location)];
}

void Stream::begin_response(int status, uint64_t content_length) {
    begin_streamed_response(status);
    if (!http::is_bodyless_status(status)) {
        char digits[24];
        auto [end, error] = std::to_chars(digits, digits + sizeof digits, content_length);
        add_header("content-length", {digits, static_cast<size_t>(end - digits)});
    }
}

void Stream::begin_streamed_response(int status) {
    r_.response_begun = true;
    r_.response_status = status;
    head_only_ = request_.is_head() || http::is_bodyless_status(status);
    const std::string& server_header = session_.server().config.server.server_header;
    if (!server_header.empty()) add_header("server", server_header);
    add_header("date", session_.server().date.now());
}

void Stream::add_header(std::string_view name, std::string_view value) {
    if (is_connection_specific(name)) return;
    // RFC 9113 8.2.1: field names are lower case on the wire.
    std::string& fields = buffers_.response_fields;
    size_t at = fields.size();
    fields.resize(at + name.size() + value.size());
    http::copy_lower_case(fields.data() + at, name);
    std::memcpy(fields.data() + at + name.size(), value.data(), value.size());
    buffers_.field_lengths.push_back({static_cast<uint32_t>(name.size()), static_cast<uint32_t>(value.size())});
}

void Stream::commit_head(bool with_body) {
    r_.head_committed = true;
    if (closed_) return;
    http::add_location_headers(session_.server(), r_.location, r_.response_status, *this);
    std::to_chars(status_digits_, status_digits_ + 3, r_.response_status);
    std::vector<nghttp2_nv>& fields = session_.header_scratch();
    fields.resize(1 + buffers_.field_lengths.size());
    nghttp2_nv* next = fields.data();
    *next++ = field(":status", {status_digits_, 3});
    const char* at = buffers_.response_fields.data();
    for (auto [name_length, value_length] : buffers_.field_lengths) {
        *next++ = field({at, name_length}, {at + name_length, value_length});
        at += name_length + value_length;
    }
    nghttp2_data_provider provider{};
    provider.source.ptr = this;
    provider.read_callback = read_stream_data;
    bool data = with_body && !head_only_;
    nghttp2_submit_response(session_.nghttp2(), id_, fields.data(), fields.size(),
                            data ? &provider : nullptr);
}

void Stream::send_body(std::string_view bytes) { send_body_pieces({&bytes, 1}, false); }

void Stream::send_body_pieces(std::span<const std::string_view> pieces, bool last) {
    if (!r_.head_committed) commit_head(true);
    if (!head_only_)
        for (std::string_view piece : pieces) body_.push_memory(piece);
    if (last) {
        end_response();
        return;
    }
    // As over HTTP/1.1, the handler hears of a drain only from a later
    // event, never from inside its own send (the proxy sends from inside
    // llhttp, and would run the parser again there): what this send writes,
    // and what an earlier one left pending, it sees in output_pending() when
    // this returns.
    drain_wanted_ = false;
    body_queued();
    drain_wanted_ = output_pending();
    if (drain_wanted_) session_.watch_drain();
}

void Stream::send_owned_body(std::string_view bytes, std::shared_ptr<const void> owner) {
    if (!r_.head_committed) commit_head(true);
    owner_ = std::move(owner);
    // Framed once end_response comes, as over HTTP/1.1.
    if (!head_only_) body_.push_memory(bytes);
}

void Stream::send_file(int fd, off_t offset, uint64_t length, std::shared_ptr<const void> owner) {
    if (!r_.head_committed) commit_head(true);
    owner_ = std::move(owner);
    if (!head_only_) body_.push_file(fd, offset, length);
}

void Stream::hand_over_buffer(core::BufferPool& pool, char* block) {
    handed_over_pool_ = &pool;
    handed_over_block_ = block;
}

void Stream::end_response() {
    if (!r_.head_committed) commit_head(false);
    r_.response_ended = true;
    r_.listener = nullptr;
    body_queued();
}

void Stream::body_queued() {
    if (closed_) return;
    if (deferred_) {
        deferred_ = false;
        nghttp2_session_resume_data(session_.nghttp2(), id_);
    }
    session_.send();
}

void Stream::abort() {
    record(r_.response_status);  // the status the client was sent
    r_.listener = nullptr;
    r_.response_ended = true;
    body_.clear();
    if (closed_) return;
    nghttp2_submit_rst_stream(session_.nghttp2(), NGHTTP2_FLAG_NONE, id_, NGHTTP2_INTERNAL_ERROR);
    session_.send();
}

bool Stream::output_pending() const {
    return !body_.empty() || session_.written() < last_byte_at_;
}

ssize_t Stream::read_data(size_t length, uint32_t* data_flags) {
    uint64_t available = body_.pending_bytes();
    if (available == 0) {
        if (r_.response_ended) {
            *data_flags |= NGHTTP2_DATA_FLAG_EOF;
            return 0;
        }
        deferred_ = true;
        return NGHTTP2_ERR_DEFERRED;
    }
    size_t take = static_cast<size_t>(std::min<uint64_t>(length, available));
    *data_flags |= NGHTTP2_DATA_FLAG_NO_COPY;
    if (r_.response_ended && take == available) *data_flags |= NGHTTP2_DATA_FLAG_EOF;
    return static_cast<ssize_t>(take);
}

void Stream::move_data(size_t length, transport::OutputQueue& to) {
    body_.move_front_to(to, length);
    body_bytes_ += length;
    last_byte_at_ = session_.output_end();
    if (drain_wanted_) session_.watch_drain();
}

bool Stream::drained_and_waited_for() {
    if (!drain_wanted_ || r_.listener == nullptr) return false;
    if (output_pending()) {
        session_.watch_drain();
        return false;
    }
    return true;
}

void Stream::tell_drained() {
    drain_wanted_ = false;
    r_.listener->on_output_drained();
}

void Stream::record(int status) {
    if (std::exchange(r_.recorded, true)) return;
    Carrier& carrier = session_.carrier();
    http::record_finished_request(session_.server(), {.request = request_,
                                                      .state = r_,
                                                      .transport = carrier.transport(),
                                                      .status = status,
                                                      .response_bytes = body_bytes_});
}

}  // namespace portico::http2
