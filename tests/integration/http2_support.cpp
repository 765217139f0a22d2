#include "http2_support.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace portico::test::h2 {

using Clock = std::chrono::steady_clock;

namespace {

uint32_t read32(const std::string& bytes, size_t at) {
    return (static_cast<uint32_t>(static_cast<uint8_t>(bytes[at])) << 24) |
           (static_cast<uint32_t>(static_cast<uint8_t>(bytes[at + 1])) << 16) |
           (static_cast<uint32_t>(static_cast<uint8_t>(bytes[at + 2])) << 8) |
           static_cast<uint32_t>(static_cast<uint8_t>(bytes[at + 3]));
}

void put32(std::string& out, uint32_t value) {
    out += static_cast<char>((value >> 24) & 0xff);
    out += static_cast<char>((value >> 16) & 0xff);
    out += static_cast<char>((value >> 8) & 0xff);
    out += static_cast<char>(value & 0xff);
}

void put16(std::string& out, uint16_t value) {
    out += static_cast<char>((value >> 8) & 0xff);
    out += static_cast<char>(value & 0xff);
}

std::string hex(uint32_t value) {
    char text[16];
    std::snprintf(text, sizeof text, "0x%x", value);
    return text;
}

std::chrono::milliseconds left_until(Clock::time_point deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    return left.count() < 0 ? std::chrono::milliseconds(0) : left;
}

}  // namespace

const char* frame_type_name(uint8_t type) {
    static const char* const names[] = {"DATA",     "HEADERS", "PRIORITY",      "RST_STREAM",
                                        "SETTINGS", "PUSH_PROMISE", "PING",     "GOAWAY",
                                        "WINDOW_UPDATE", "CONTINUATION"};
    return type < std::size(names) ? names[type] : "UNKNOWN";
}

const char* error_code_name(uint32_t code) {
    static const char* const names[] = {
        "NO_ERROR",       "PROTOCOL_ERROR", "INTERNAL_ERROR",    "FLOW_CONTROL_ERROR",
        "SETTINGS_TIMEOUT", "STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM",
        "CANCEL",         "COMPRESSION_ERROR", "CONNECT_ERROR",  "ENHANCE_YOUR_CALM",
        "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED"};
    return code < std::size(names) ? names[code] : "UNKNOWN_ERROR";
}

// ---- frames --------------------------------------------------------------------

uint32_t Frame::error_code() const {
    if (type == RST_STREAM && payload.size() >= 4) return read32(payload, 0);
    if (type == GOAWAY && payload.size() >= 8) return read32(payload, 4);
    return UINT32_MAX;
}

uint32_t Frame::last_stream() const {
    return type == GOAWAY && payload.size() >= 4 ? read32(payload, 0) & 0x7fffffff : UINT32_MAX;
}

uint32_t Frame::increment() const {
    return type == WINDOW_UPDATE && payload.size() >= 4 ? read32(payload, 0) & 0x7fffffff : 0;
}

std::string Frame::field(std::string_view name) const {
    for (const auto& [field_name, value] : fields)
        if (field_name == name) return value;
    return "";
}

std::string Frame::describe() const {
    std::string text = std::string(frame_type_name(type)) + " stream=" + std::to_string(stream) +
                       " flags=" + hex(flags) + " len=" + std::to_string(payload.size());
    switch (type) {
    case RST_STREAM:
        text += std::string(" error=") + error_code_name(error_code());
        break;
    case GOAWAY:
        text += " last_stream=" + std::to_string(last_stream()) + " error=" +
                error_code_name(error_code());
        if (payload.size() > 8) text += " debug=\"" + payload.substr(8, 120) + "\"";
        break;
    case WINDOW_UPDATE:
        text += " increment=" + std::to_string(increment());
        break;
    case SETTINGS:
        for (size_t at = 0; at + 6 <= payload.size(); at += 6)
            text += " " + std::to_string((static_cast<uint8_t>(payload[at]) << 8) |
                                         static_cast<uint8_t>(payload[at + 1])) +
                    "=" + std::to_string(read32(payload, at + 2));
        break;
    case HEADERS:
        if (!field(":status").empty()) text += " :status=" + field(":status");
        text += " fields=" + std::to_string(fields.size());
        break;
    default:
        break;
    }
    return text;
}

std::string frame(uint8_t type, uint8_t flags, uint32_t stream, std::string_view payload) {
    std::string out;
    out.reserve(9 + payload.size());
    size_t length = payload.size();
    out += static_cast<char>((length >> 16) & 0xff);
    out += static_cast<char>((length >> 8) & 0xff);
    out += static_cast<char>(length & 0xff);
    out += static_cast<char>(type);
    out += static_cast<char>(flags);
    put32(out, stream & 0x7fffffff);
    out.append(payload);
    return out;
}

std::string settings_frame(const Settings& settings) {
    std::string payload;
    for (auto [id, value] : settings) {
        put16(payload, id);
        put32(payload, value);
    }
    return frame(SETTINGS, 0, 0, payload);
}

std::string settings_ack() { return frame(SETTINGS, FLAG_ACK, 0, ""); }

std::string ping_frame(std::string_view opaque8, bool ack) {
    std::string payload(opaque8.substr(0, 8));
    payload.resize(8, '\0');
    return frame(PING, ack ? FLAG_ACK : 0, 0, payload);
}

std::string window_update_frame(uint32_t stream, uint32_t increment) {
    std::string payload;
    put32(payload, increment & 0x7fffffff);
    return frame(WINDOW_UPDATE, 0, stream, payload);
}

std::string rst_stream_frame(uint32_t stream, uint32_t code) {
    std::string payload;
    put32(payload, code);
    return frame(RST_STREAM, 0, stream, payload);
}

std::string goaway_frame(uint32_t last_stream, uint32_t code) {
    std::string payload;
    put32(payload, last_stream);
    put32(payload, code);
    return frame(GOAWAY, 0, 0, payload);
}

std::string data_frame(uint32_t stream, std::string_view data, bool end_stream) {
    return frame(DATA, end_stream ? FLAG_END_STREAM : 0, stream, data);
}

// ---- HPACK -------------------------------------------------------------------

HpackEncoder::HpackEncoder() {
    if (nghttp2_hd_deflate_new(&deflater_, 4096) != 0) throw std::runtime_error("nghttp2_hd_deflate_new");
}

HpackEncoder::~HpackEncoder() { nghttp2_hd_deflate_del(deflater_); }

std::string HpackEncoder::encode(const Fields& fields) {
    std::vector<nghttp2_nv> list;
    for (const auto& [name, value] : fields)
        list.push_back({reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
                        reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())), name.size(),
                        value.size(), NGHTTP2_NV_FLAG_NONE});
    std::string out(nghttp2_hd_deflate_bound(deflater_, list.data(), list.size()), '\0');
    ssize_t length = nghttp2_hd_deflate_hd(deflater_, reinterpret_cast<uint8_t*>(out.data()),
                                           out.size(), list.data(), list.size());
    if (length < 0) throw std::runtime_error("nghttp2_hd_deflate_hd failed");
    out.resize(static_cast<size_t>(length));
    return out;
}

std::string hpack_integer(uint64_t value, int prefix_bits, uint8_t first_byte_flags) {
    std::string out;
    uint64_t max_prefix = (1u << prefix_bits) - 1;
    if (value < max_prefix) {
        out += static_cast<char>(first_byte_flags | value);
        return out;
    }
    out += static_cast<char>(first_byte_flags | max_prefix);
    value -= max_prefix;
    while (value >= 128) {
        out += static_cast<char>((value & 0x7f) | 0x80);
        value >>= 7;
    }
    out += static_cast<char>(value);
    return out;
}

namespace {
std::string hpack_string(std::string_view text) {
    return hpack_integer(text.size(), 7, 0x00) + std::string(text);
}
}  // namespace

std::string hpack_literal(std::string_view name, std::string_view value) {
    return std::string(1, '\0') + hpack_string(name) + hpack_string(value);
}

std::string hpack_literal_indexed(std::string_view name, std::string_view value) {
    return std::string(1, '\x40') + hpack_string(name) + hpack_string(value);
}

std::string hpack_indexed(uint32_t index) { return hpack_integer(index, 7, 0x80); }

// ---- transports ----------------------------------------------------------------

class Client::Pipe {
public:
    virtual ~Pipe() = default;
    virtual bool send(const std::string& bytes, std::chrono::milliseconds timeout) = 0;
    // Up to `size` bytes; 0 at the end of the stream; -1 on timeout.
    virtual ssize_t read_some(char* buffer, size_t size, int timeout_ms) = 0;
    virtual int fd() const = 0;
    virtual void abort() = 0;
};

// A non-blocking socket whose send reads what arrives meanwhile, so that
// neither side stalls on a full buffer while a flood goes out.
class Client::PlainPipe final : public Client::Pipe {
public:
    PlainPipe(uint16_t port, int receive_buffer, int max_segment) {
        fd_ = connect_loopback(port, receive_buffer, max_segment);
        int one = 1;
        ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
    }
    ~PlainPipe() override {
        if (fd_ >= 0) ::close(fd_);
    }

    bool send(const std::string& bytes, std::chrono::milliseconds timeout) override {
        auto deadline = Clock::now() + timeout;
        size_t sent = 0;
        while (sent < bytes.size()) {
            if (fd_ < 0) return false;
            ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
            if (n > 0) {
                sent += static_cast<size_t>(n);
                continue;
            }
            if (n < 0 && errno != EAGAIN && errno != EINTR) return false;
            auto left = left_until(deadline);
            if (left.count() == 0) return false;
            pollfd pfd{fd_, POLLIN | POLLOUT, 0};
            if (::poll(&pfd, 1, static_cast<int>(left.count())) <= 0) return false;
            if ((pfd.revents & POLLIN) && !eof_) take_input();
        }
        return true;
    }

    ssize_t read_some(char* buffer, size_t size, int timeout_ms) override {
        if (!pending_.empty()) {
            size_t take = std::min(size, pending_.size());
            std::memcpy(buffer, pending_.data(), take);
            pending_.erase(0, take);
            return static_cast<ssize_t>(take);
        }
        if (eof_ || fd_ < 0) return 0;
        pollfd pfd{fd_, POLLIN, 0};
        if (::poll(&pfd, 1, timeout_ms) <= 0) return -1;
        ssize_t n = ::recv(fd_, buffer, size, 0);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) return -1;
        if (n <= 0) {
            eof_ = true;
            return 0;
        }
        return n;
    }

    int fd() const override { return fd_; }

    void abort() override {
        if (fd_ < 0) return;
        linger reset{1, 0};
        ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
        ::close(fd_);
        fd_ = -1;
        eof_ = true;
    }

private:
    void take_input() {
        char chunk[65536];
        ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
        if (n > 0) pending_.append(chunk, static_cast<size_t>(n));
        else if (n == 0 || (errno != EAGAIN && errno != EINTR)) eof_ = true;
    }

    int fd_ = -1;
    std::string pending_;
    bool eof_ = false;
};

class Client::TlsPipe final : public Client::Pipe {
public:
    TlsPipe(uint16_t port, const TlsOptions& options) : client_(port, options) {}
    bool handshake(std::string& error) {
        bool done = client_.handshake();
        if (!done) error = client_.error();
        return done;
    }
    std::string alpn() const { return client_.alpn(); }
    bool send(const std::string& bytes, std::chrono::milliseconds timeout) override {
        return client_.send(bytes, timeout);
    }
    ssize_t read_some(char* buffer, size_t size, int timeout_ms) override {
        return client_.read_some(buffer, size, timeout_ms);
    }
    int fd() const override { return client_.fd(); }
    void abort() override { client_.abort(); }

private:
    TlsClient client_;
};

// ---- the client --------------------------------------------------------------

TlsOptions ClientOptions::default_tls_options() {
    TlsOptions options;
    options.server_name = "a.test";
    options.alpn = {"h2", "http/1.1"};
    return options;
}

std::string StreamResult::header(std::string_view name) const {
    for (const auto& [field_name, value] : headers)
        if (field_name == name) return value;
    return "";
}

Client::Client(uint16_t port, ClientOptions options) : options_(std::move(options)) {
    // OpenSSL writes with write(), not send(MSG_NOSIGNAL): a flood that the
    // server cut short would end the test process with SIGPIPE.
    static const bool sigpipe_ignored = [] { return ::signal(SIGPIPE, SIG_IGN) != SIG_ERR; }();
    (void)sigpipe_ignored;
    if (nghttp2_hd_inflate_new(&inflater_) != 0) throw std::runtime_error("nghttp2_hd_inflate_new");
    if (options_.tls) {
        auto pipe = std::make_unique<TlsPipe>(port, options_.tls_options);
        connected_ = pipe->handshake(error_);
        pipe_ = std::move(pipe);
    } else {
        pipe_ = std::make_unique<PlainPipe>(port, options_.receive_buffer, options_.max_segment);
        connected_ = true;
    }
    if (connected_ && options_.send_preface) send_preface();
}

Client::~Client() { nghttp2_hd_inflate_del(inflater_); }

std::string Client::alpn() const {
    if (auto* tls = dynamic_cast<TlsPipe*>(pipe_.get())) return tls->alpn();
    return "";
}

int Client::fd() const { return pipe_->fd(); }

void Client::abort() {
    pipe_->abort();
    eof_ = true;
}

bool Client::send_raw(const std::string& bytes) {
    if (write_failed_) return false;
    if (!pipe_->send(bytes, 10s)) write_failed_ = true;
    return !write_failed_;
}

void Client::send_preface() {
    send_raw(std::string(client_magic) + settings_frame(options_.settings));
}

bool Client::fill(Clock::time_point deadline) {
    if (eof_) return false;
    char chunk[65536];
    ssize_t n = pipe_->read_some(chunk, sizeof chunk, static_cast<int>(left_until(deadline).count()));
    if (n < 0) return false;
    if (n == 0) {
        eof_ = true;
        trace_ += "<closed>\n";
        return false;
    }
    input_.append(chunk, static_cast<size_t>(n));
    return true;
}

std::optional<Frame> Client::parse_frame() {
    if (input_.size() < 9) return std::nullopt;
    size_t length = (static_cast<size_t>(static_cast<uint8_t>(input_[0])) << 16) |
                    (static_cast<size_t>(static_cast<uint8_t>(input_[1])) << 8) |
                    static_cast<uint8_t>(input_[2]);
    if (input_.size() < 9 + length) return std::nullopt;
    Frame frame;
    frame.type = static_cast<uint8_t>(input_[3]);
    frame.flags = static_cast<uint8_t>(input_[4]);
    frame.stream = read32(input_, 5) & 0x7fffffff;
    frame.payload = input_.substr(9, length);
    input_.erase(0, 9 + length);
    return frame;
}

void Client::decode_block(Frame& frame) {
    const auto* in = reinterpret_cast<const uint8_t*>(frame.payload.data());
    size_t left = frame.payload.size();
    while (true) {
        nghttp2_nv field;
        int flags = 0;
        ssize_t used = nghttp2_hd_inflate_hd2(inflater_, &field, &flags, in, left, 1);
        if (used < 0) {
            trace_ += "  (HPACK decoding failed: " + std::string(nghttp2_strerror(static_cast<int>(used))) + ")\n";
            return;
        }
        in += used;
        left -= static_cast<size_t>(used);
        if (flags & NGHTTP2_HD_INFLATE_EMIT)
            frame.fields.emplace_back(std::string(reinterpret_cast<char*>(field.name), field.namelen),
                                      std::string(reinterpret_cast<char*>(field.value), field.valuelen));
        if (flags & NGHTTP2_HD_INFLATE_FINAL) {
            nghttp2_hd_inflate_end_headers(inflater_);
            return;
        }
        if (!(flags & NGHTTP2_HD_INFLATE_EMIT) && left == 0) return;
    }
}

std::optional<Frame> Client::next_frame(std::chrono::milliseconds timeout) {
    auto deadline = Clock::now() + timeout;
    while (true) {
        while (std::optional<Frame> raw = parse_frame()) {
            Frame frame = std::move(*raw);
            trace_ += "<- " + frame.describe() + "\n";
            ++frame_counts_[frame.type];
            if (frame.type == HEADERS || frame.type == PUSH_PROMISE) {
                // The block without padding and priority fields.
                size_t start = 0, end = frame.payload.size();
                if (frame.has(FLAG_PADDED) && !frame.payload.empty()) {
                    start = 1;
                    end -= std::min<size_t>(end, static_cast<uint8_t>(frame.payload[0]));
                }
                if (frame.type == HEADERS && frame.has(FLAG_PRIORITY)) start += 5;
                frame.payload = start < end ? frame.payload.substr(start, end - start) : "";
                if (!frame.has(FLAG_END_HEADERS)) {
                    block_ = std::move(frame);
                    continue;
                }
            } else if (frame.type == CONTINUATION) {
                if (!block_) continue;
                block_->payload += frame.payload;
                if (!frame.has(FLAG_END_HEADERS)) continue;
                block_->flags |= FLAG_END_HEADERS;
                frame = std::move(*block_);
                block_.reset();
            }
            if (frame.type == HEADERS || frame.type == PUSH_PROMISE) {
                decode_block(frame);
                // The decoded fields, for the trace's line.
                if (!frame.field(":status").empty())
                    trace_ += "   :status=" + frame.field(":status") + "\n";
            }
            handle(frame);
            return frame;
        }
        if (!fill(deadline)) return std::nullopt;
    }
}

void Client::handle(Frame& frame) {
    switch (frame.type) {
    case SETTINGS:
        if (frame.has(FLAG_ACK)) break;
        server_settings_seen_ = true;
        for (size_t at = 0; at + 6 <= frame.payload.size(); at += 6) {
            uint16_t id = static_cast<uint16_t>((static_cast<uint8_t>(frame.payload[at]) << 8) |
                                                static_cast<uint8_t>(frame.payload[at + 1]));
            uint32_t value = read32(frame.payload, at + 2);
            server_settings_[id] = value;
            if (id == SETTINGS_INITIAL_WINDOW_SIZE) {
                int64_t delta = static_cast<int64_t>(value) - peer_initial_window_;
                for (auto& [stream, window] : stream_windows_) window += delta;
                peer_initial_window_ = value;
            } else if (id == SETTINGS_MAX_FRAME_SIZE) {
                peer_max_frame_ = value;
            }
        }
        if (options_.auto_ack) send_raw(settings_ack());
        break;
    case PING:
        if (!frame.has(FLAG_ACK) && options_.auto_ack) send_raw(ping_frame(frame.payload, true));
        break;
    case WINDOW_UPDATE:
        if (frame.stream == 0) {
            connection_window_ += frame.increment();
        } else {
            stream_windows_[frame.stream] += frame.increment();
            ++streams_[frame.stream].window_updates;
        }
        break;
    case GOAWAY:
        if (!goaway_) goaway_ = frame;
        break;
    case RST_STREAM: {
        StreamResult& result = streams_[frame.stream];
        if (!result.reset) result.reset = frame.error_code();
        outgoing_.erase(frame.stream);
        break;
    }
    case HEADERS: {
        StreamResult& result = streams_[frame.stream];
        if (!result.headers_received) {
            int status = std::atoi(frame.field(":status").c_str());
            if (status >= 100 && status < 200) break;  // informational: the real one follows
            result.headers_received = true;
            result.status = status;
            result.headers = frame.fields;
        } else {
            result.trailers = frame.fields;
        }
        if (frame.has(FLAG_END_STREAM)) result.ended = true;
        break;
    }
    case DATA: {
        StreamResult& result = streams_[frame.stream];
        size_t start = 0, end = frame.payload.size();
        if (frame.has(FLAG_PADDED) && !frame.payload.empty()) {
            start = 1;
            end -= std::min<size_t>(end, static_cast<uint8_t>(frame.payload[0]));
        }
        if (start < end) result.body.append(frame.payload, start, end - start);
        ++result.data_frames;
        if (frame.has(FLAG_END_STREAM)) result.ended = true;
        if (options_.auto_window_update && !frame.payload.empty()) {
            std::string updates = window_update_frame(0, static_cast<uint32_t>(frame.payload.size()));
            if (!result.done())
                updates += window_update_frame(frame.stream, static_cast<uint32_t>(frame.payload.size()));
            send_raw(updates);
        }
        break;
    }
    default:
        break;
    }
    send_pending_bodies();
}

uint32_t Client::request(const Fields& fields, std::optional<std::string> body) {
    uint32_t id = next_stream_;
    next_stream_ += 2;
    streams_[id];
    stream_windows_.emplace(id, peer_initial_window_);
    std::string block = encoder_.encode(fields);
    uint8_t end_stream = body ? 0 : FLAG_END_STREAM;
    // Blocks longer than a frame go on in CONTINUATION frames.
    const size_t max = peer_max_frame_;
    if (block.size() <= max) {
        send_raw(frame(HEADERS, FLAG_END_HEADERS | end_stream, id, block));
    } else {
        std::string out = frame(HEADERS, end_stream, id, std::string_view(block).substr(0, max));
        for (size_t at = max; at < block.size(); at += max) {
            bool last = at + max >= block.size();
            out += frame(CONTINUATION, last ? FLAG_END_HEADERS : 0, id,
                         std::string_view(block).substr(at, max));
        }
        send_raw(out);
    }
    if (body) {
        Outgoing& out = outgoing_[id];
        out.data = std::move(*body);
        out.end_stream = true;
        send_pending_bodies();
    }
    return id;
}

Fields Client::request_fields(const std::string& method, const std::string& path,
                              const std::string& scheme, const std::string& authority,
                              const Fields& extra) {
    Fields fields = {{":method", method}, {":scheme", scheme}, {":authority", authority}, {":path", path}};
    fields.insert(fields.end(), extra.begin(), extra.end());
    return fields;
}

uint32_t Client::get(const std::string& path, const Fields& extra, const std::string& method,
                     const std::string& authority) {
    return request(request_fields(method, path, scheme(), authority, extra));
}

void Client::send_headers_block(uint32_t stream, const std::string& block, uint8_t flags) {
    streams_[stream];
    stream_windows_.emplace(stream, peer_initial_window_);
    if (stream >= next_stream_) next_stream_ = stream + 2;
    send_raw(frame(HEADERS, flags, stream, block));
}

void Client::send_body(uint32_t stream, const std::string& data, bool end_stream) {
    Outgoing& out = outgoing_[stream];
    out.data += data;
    out.end_stream = end_stream;
    send_pending_bodies();
}

bool Client::body_pending(uint32_t id) const { return outgoing_.count(id) != 0; }

void Client::send_pending_bodies() {
    for (auto it = outgoing_.begin(); it != outgoing_.end();) {
        uint32_t id = it->first;
        Outgoing& out = it->second;
        int64_t& stream_window = stream_windows_[id];
        while (out.offset < out.data.size() && !write_failed_) {
            int64_t room = options_.respect_windows ? std::min(connection_window_, stream_window)
                                                    : int64_t{1} << 30;
            size_t chunk = std::min<size_t>({out.data.size() - out.offset, peer_max_frame_,
                                             static_cast<size_t>(std::max<int64_t>(room, 0))});
            if (chunk == 0) break;
            bool last = out.end_stream && out.offset + chunk == out.data.size();
            send_raw(data_frame(id, std::string_view(out.data).substr(out.offset, chunk), last));
            out.offset += chunk;
            connection_window_ -= static_cast<int64_t>(chunk);
            stream_window -= static_cast<int64_t>(chunk);
            if (last) out.end_sent = true;
        }
        if (out.offset == out.data.size() && out.end_stream && !out.end_sent) {
            send_raw(data_frame(id, "", true));
            out.end_sent = true;
        }
        if (out.offset == out.data.size() && (out.end_sent || !out.end_stream))
            it = outgoing_.erase(it);
        else
            ++it;
    }
}

std::optional<Frame> Client::wait_for(const std::function<bool(const Frame&)>& match,
                                      std::chrono::milliseconds timeout) {
    auto deadline = Clock::now() + timeout;
    while (true) {
        std::optional<Frame> got = next_frame(left_until(deadline));
        if (!got) return std::nullopt;
        if (match(*got)) return got;
    }
}

std::optional<Frame> Client::wait_for_type(uint8_t type, std::chrono::milliseconds timeout) {
    return wait_for([type](const Frame& frame) { return frame.type == type; }, timeout);
}

bool Client::wait_closed(std::chrono::milliseconds timeout) {
    auto deadline = Clock::now() + timeout;
    while (!eof_) {
        if (!next_frame(left_until(deadline)) && !eof_ && left_until(deadline).count() == 0)
            return false;
    }
    return true;
}

void Client::pump_for(std::chrono::milliseconds duration) {
    auto deadline = Clock::now() + duration;
    while (!eof_ && left_until(deadline).count() > 0) next_frame(left_until(deadline));
}

bool Client::wait_streams(const std::vector<uint32_t>& ids, std::chrono::milliseconds timeout) {
    auto deadline = Clock::now() + timeout;
    auto all_done = [&] {
        return std::all_of(ids.begin(), ids.end(), [&](uint32_t id) { return streams_[id].done(); });
    };
    while (!all_done()) {
        if (!next_frame(left_until(deadline))) return all_done();
    }
    return true;
}

int Client::frames_received(uint8_t type) const {
    auto it = frame_counts_.find(type);
    return it == frame_counts_.end() ? 0 : it->second;
}

// ---- other helpers -------------------------------------------------------------

CommandResult run_bounded(const std::string& command, int seconds) {
    std::string quoted;
    for (char c : command) {
        if (c == '\'') quoted += "'\\''";
        else quoted += c;
    }
    return run_shell("timeout -k 2 " + std::to_string(seconds) + " sh -c '" + quoted + "'");
}

double sum_samples(const std::string& text, const std::string& prefix) {
    double total = 0;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);)
        if (line.rfind(prefix, 0) == 0) total += std::stod(line.substr(line.rfind(' ') + 1));
    return total;
}

}  // namespace portico::test::h2
