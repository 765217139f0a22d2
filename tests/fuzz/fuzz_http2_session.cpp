// portico's HTTP/2 session as a client's bytes drive it: nghttp2's framing,
// HPACK and flow control, then our callbacks, streams, routing and the
// handlers behind them (`respond`, static files from memory and by
// sendfile(2), compression with a precompressed sidecar), all on one
// worker's ServerContext and composition made once, as a worker makes them.
//
// Input: a byte that cuts the rest into reads (fuzz_support.hpp Splits), a
// byte of harness choices (see Choice), then the client's bytes; the
// connection preface is put in front unless they start with it, so the
// fuzzer spends its time on frames.
//
// The transport writes to a non-blocking socketpair with small buffers (the
// real OutputQueue::flush, writev and sendfile), so large responses block
// and resume on writability. Ending the session closes the "connection" at
// once, as ClientConnection::close does (connection_closed() inside the
// session's own call); the Session itself is freed after the loop turn.
//
// Besides crashes, sanitizer reports and leaks, the server's output is
// checked frame by frame, its header blocks decoded with a separate HPACK
// inflater: well-framed, SETTINGS first, no PUSH_PROMISE, responses only on
// client (odd) streams, nothing on a stream after its END_STREAM or
// RST_STREAM, no header block interleaved with other frames, :status
// first with three digits, lower-case names, no connection-specific fields,
// no CR/LF/NUL in a value, at most one content-length and DATA that never
// exceeds it (all of it when the body is there at all: HEAD has none).
#include <arpa/inet.h>
#include <fcntl.h>
#include <nghttp2/nghttp2.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "config/config.hpp"
#include "fuzz_support.hpp"
#include "http/server_context.hpp"
#include "http2/session.hpp"
#include "transport/transport.hpp"
#include "worker/composition.hpp"
#include "metrics/shared_counters.hpp"

using portico::transport::OutputQueue;

namespace {

constexpr std::string_view preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

// The second input byte.
enum Choice : uint8_t {
    timeout_at_end = 1,        // the timer the session armed fires after the input
    drain_after_first = 2,     // a worker drain (GOAWAY) after the first read
    client_reads_late = 4,     // the client reads nothing until the end: output blocks
    timeout_after_each = 8,    // the armed timer fires after every read
    writable_after_each = 16,  // a writability event after every read, blocked or not
    send_first = 32,           // our SETTINGS before any input (h2 by ALPN; h2c waits for the preface)
};

// PORTICO_FUZZ_VERBOSE=1: the server's frames and response fields on
// stderr, to see what an input does (tests/fuzz/fuzz_http2_session INPUT).
bool verbose() {
    static const bool on = std::getenv("PORTICO_FUZZ_VERBOSE") != nullptr;
    return on;
}


void write_file(const std::string& path, const std::string& contents) {
    std::ofstream out(path, std::ios::binary);
    out << contents;
    FUZZ_CHECK(out.good());
}

std::string text_of(size_t size, unsigned seed) {
    static constexpr std::string_view words[] = {"portico ", "serves ", "static ", "files, ",
                                                 "proxies ", "and ",     "compresses\n"};
    std::string text;
    while (text.size() < size) text += words[(text.size() * 7 + seed) % std::size(words)];
    text.resize(size);
    return text;
}

// One worker's state, made once: files in a temporary folder, the config,
// the shared counters and this worker's slot, the uv loop, the ServerContext.
struct World {
    uv_loop_t loop;
    std::string folder;
    portico::config::Config config;
    std::unique_ptr<portico::metrics::SharedCounters> shared;
    std::unique_ptr<portico::http::ServerContext> server;
    std::unique_ptr<portico::access::LimitZones> limits;
    std::unique_ptr<portico::worker::Composition> composition;
    int client_fd = -1;  // the client's end of the socketpair
    int server_fd = -1;  // what the transport writes to

    World() {
        spdlog::set_level(spdlog::level::off);
        char made[] = "/tmp/portico-fuzz-h2-XXXXXX";
        FUZZ_CHECK(mkdtemp(made) != nullptr);
        folder = made;
        static std::string remove_at_exit;
        remove_at_exit = folder;
        std::atexit([] { std::filesystem::remove_all(remove_at_exit); });
        std::string www = folder + "/www";
        FUZZ_CHECK(mkdir(www.c_str(), 0755) == 0);
        FUZZ_CHECK(mkdir((www + "/z").c_str(), 0755) == 0);
        write_file(www + "/index.html", "<!doctype html><title>portico</title>" + text_of(300, 1));
        write_file(www + "/a.txt", "a\n");
        // Past the file cache's in-memory size and the stream's initial
        // window: sendfile, and flow control.
        std::string binary(100 * 1024, '\0');
        for (size_t i = 0; i < binary.size(); ++i) binary[i] = static_cast<char>(i * 131 + (i >> 9));
        write_file(www + "/big.bin", binary);
        write_file(www + "/z/page.html", "<!doctype html>" + text_of(2000, 2));
        write_file(www + "/z/app.js", text_of(90 * 1024, 3));
        write_file(www + "/z/tiny.json", "{\"a\":1}");
        write_file(www + "/z/style.css", text_of(1200, 4));
        write_file(www + "/z/style.css.gz", std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10) +
                                                text_of(200, 5));  // served as is, never decoded
        std::string text = R"([server]
listen = ["127.0.0.1:8080"]
workers = 1
max_header_bytes = "4KiB"
max_body_bytes = "64KiB"

[log]
level = "error"
access = "off"

[http2]
cleartext = true
max_concurrent_streams = 8

[[location]]
exact = "/hello"
respond = { status = 200, body = "hello\n" }

[[location]]
exact = "/nothing"
respond = { status = 204, body = "" }

[[location]]
prefix = "/z/"
root = "www"
compress = { min_length = 64 }
precompressed = ["gzip"]
headers = { "X-Test" = "yes" }

[[location]]
prefix = "/"
root = "www"
cache_control = "public, max-age=60"
)";
        portico::config::LoadResult loaded =
            portico::config::parse_config(text, folder + "/portico.toml");
        if (!loaded.errors.empty()) {
            for (const auto& error : loaded.errors)
                std::fprintf(stderr, "config: %s\n", error.message.c_str());
            FUZZ_CHECK(loaded.errors.empty());
        }
        config = std::move(*loaded.config);
        std::string error;
        shared = portico::metrics::SharedCounters::create(portico::metrics::capacity_for(config), error);
        FUZZ_CHECK(shared != nullptr);
        FUZZ_CHECK(shared->register_names(config).empty());
        FUZZ_CHECK(uv_loop_init(&loop) == 0);
        server = std::make_unique<portico::http::ServerContext>(
            &loop, config, shared->attach(shared->lease_slot(0).slot, config), 0);
        limits = portico::access::LimitZones::create(config, nullptr, error);
        FUZZ_CHECK(limits != nullptr);
        composition = std::make_unique<portico::worker::Composition>(*server, 443, *limits);

        int pair[2];
        FUZZ_CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0);
        server_fd = pair[0];
        client_fd = pair[1];
        // Small buffers: a response of some size blocks, then goes on when
        // the client reads.
        int size = 8 * 1024;
        setsockopt(server_fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
        setsockopt(client_fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
        for (int fd : pair) FUZZ_CHECK(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == 0);
    }
};

// What the client receives, checked frame by frame.
class OutputChecker {
public:
    OutputChecker() { FUZZ_CHECK(nghttp2_hd_inflate_new(&inflater_) == 0); }
    ~OutputChecker() { nghttp2_hd_inflate_del(inflater_); }
    OutputChecker(const OutputChecker&) = delete;
    OutputChecker& operator=(const OutputChecker&) = delete;

    void add(const char* bytes, size_t size) {
        received_ += size;
        buffer_.append(bytes, size);
        size_t at = 0;
        while (buffer_.size() - at >= 9) {
            auto* header = reinterpret_cast<const uint8_t*>(buffer_.data() + at);
            size_t length = (size_t{header[0]} << 16) | (size_t{header[1]} << 8) | header[2];
            if (buffer_.size() - at < 9 + length) break;
            uint32_t id = ((uint32_t{header[5]} << 24) | (uint32_t{header[6]} << 16) |
                           (uint32_t{header[7]} << 8) | header[8]) &
                          0x7fffffff;
            frame(header[3], header[4], id, header + 9, length);
            at += 9 + length;
        }
        buffer_.erase(0, at);
    }
    uint64_t received() const { return received_; }
    bool at_frame_boundary() const { return buffer_.empty() && !in_header_block_; }

private:
    struct StreamState {
        bool headers = false;      // a final (non-1xx) response head was sent
        bool ended = false;        // END_STREAM or RST_STREAM sent
        bool has_length = false;
        uint64_t length = 0;
        uint64_t data = 0;
    };

    void frame(uint8_t type, uint8_t flags, uint32_t id, const uint8_t* payload, size_t length) {
        if (verbose()) std::fprintf(stderr, "  server frame type %u flags 0x%02x stream %u length %zu\n",
                                    type, flags, id, length);
        if (frames_++ == 0) FUZZ_CHECK(type == NGHTTP2_SETTINGS && id == 0 && !(flags & NGHTTP2_FLAG_ACK));
        if (in_header_block_) {
            // RFC 9113 6.10: nothing between a HEADERS and its CONTINUATIONs.
            FUZZ_CHECK(type == NGHTTP2_CONTINUATION && id == block_stream_);
            block_.append(reinterpret_cast<const char*>(payload), length);
            if (flags & NGHTTP2_FLAG_END_HEADERS) end_header_block(flags);
            return;
        }
        FUZZ_CHECK(type != NGHTTP2_CONTINUATION);
        FUZZ_CHECK(type != NGHTTP2_PUSH_PROMISE);  // portico never pushes
        switch (type) {
        case NGHTTP2_DATA: {
            FUZZ_CHECK(id % 2 == 1);
            StreamState& stream = streams_[id];
            FUZZ_CHECK(stream.headers && !stream.ended);
            size_t body = length;
            if (flags & NGHTTP2_FLAG_PADDED) {
                FUZZ_CHECK(length >= 1 && payload[0] < length);
                body = length - 1 - payload[0];
            }
            stream.data += body;
            if (stream.has_length) FUZZ_CHECK(stream.data <= stream.length);
            if (flags & NGHTTP2_FLAG_END_STREAM) end_stream(stream);
            break;
        }
        case NGHTTP2_HEADERS: {
            FUZZ_CHECK(id % 2 == 1);
            FUZZ_CHECK(!streams_[id].ended);
            size_t skip = 0, pad = 0;
            if (flags & NGHTTP2_FLAG_PADDED) {
                FUZZ_CHECK(length >= 1);
                pad = payload[0];
                skip = 1;
            }
            if (flags & NGHTTP2_FLAG_PRIORITY) skip += 5;
            FUZZ_CHECK(skip + pad <= length);
            block_.assign(reinterpret_cast<const char*>(payload) + skip, length - skip - pad);
            block_stream_ = id;
            block_end_stream_ = flags & NGHTTP2_FLAG_END_STREAM;
            in_header_block_ = true;
            if (flags & NGHTTP2_FLAG_END_HEADERS) end_header_block(flags);
            break;
        }
        case NGHTTP2_RST_STREAM:
            FUZZ_CHECK(id != 0 && length == 4);
            streams_[id].ended = true;
            break;
        case NGHTTP2_SETTINGS:
        case NGHTTP2_PING:
        case NGHTTP2_GOAWAY:
            FUZZ_CHECK(id == 0);
            break;
        default:
            break;
        }
    }

    void end_header_block(uint8_t) {
        in_header_block_ = false;
        StreamState& stream = streams_[block_stream_];
        FUZZ_CHECK(!stream.headers);  // no trailers from portico
        auto* in = reinterpret_cast<const uint8_t*>(block_.data());
        size_t left = block_.size();
        bool first = true;
        int status = 0;
        for (;;) {
            nghttp2_nv field;
            int inflate_flags = 0;
            ssize_t used = nghttp2_hd_inflate_hd2(inflater_, &field, &inflate_flags,
                                                  const_cast<uint8_t*>(in), left, 1);
            FUZZ_CHECK(used >= 0);  // the server's HPACK decodes
            in += used;
            left -= static_cast<size_t>(used);
            if (inflate_flags & NGHTTP2_HD_INFLATE_EMIT) {
                std::string_view name(reinterpret_cast<const char*>(field.name), field.namelen);
                std::string_view value(reinterpret_cast<const char*>(field.value), field.valuelen);
                response_field(stream, first, name, value, status);
                first = false;
            }
            if (inflate_flags & NGHTTP2_HD_INFLATE_FINAL) {
                nghttp2_hd_inflate_end_headers(inflater_);
                break;
            }
            if (!(inflate_flags & NGHTTP2_HD_INFLATE_EMIT) && left == 0) break;
        }
        FUZZ_CHECK(status >= 100 && status <= 999);
        if (status >= 200) stream.headers = true;
        else FUZZ_CHECK(!block_end_stream_);  // an interim head never ends a stream
        if (block_end_stream_) end_stream(stream);
    }

    static void response_field(StreamState& stream, bool first, std::string_view name,
                               std::string_view value, int& status) {
        FUZZ_CHECK(!name.empty());
        if (verbose())
            std::fprintf(stderr, "    %.*s: %.*s\n", static_cast<int>(name.size()), name.data(),
                         static_cast<int>(std::min<size_t>(value.size(), 80)), value.data());
        if (first) {
            FUZZ_CHECK(name == ":status");
            FUZZ_CHECK(value.size() == 3);
            for (char c : value) FUZZ_CHECK(c >= '0' && c <= '9');
            status = (value[0] - '0') * 100 + (value[1] - '0') * 10 + (value[2] - '0');
            return;
        }
        FUZZ_CHECK(name[0] != ':');
        for (char c : name) FUZZ_CHECK(!(c >= 'A' && c <= 'Z'));  // RFC 9113 8.2.1
        for (std::string_view banned :
             {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"})
            FUZZ_CHECK(name != banned);
        FUZZ_CHECK(value.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos);
        if (name == "content-length" && status >= 200) {
            FUZZ_CHECK(!stream.has_length);
            FUZZ_CHECK(!value.empty() && value.size() <= 19);
            uint64_t length = 0;
            for (char c : value) {
                FUZZ_CHECK(c >= '0' && c <= '9');
                length = length * 10 + static_cast<uint64_t>(c - '0');
            }
            stream.has_length = true;
            stream.length = length;
        }
    }

    static void end_stream(StreamState& stream) {
        stream.ended = true;
        // All of the body, or none of it (HEAD, 204, 304).
        if (stream.has_length) FUZZ_CHECK(stream.data == stream.length || stream.data == 0);
    }

    nghttp2_hd_inflater* inflater_ = nullptr;
    std::string buffer_;
    uint64_t received_ = 0;
    uint64_t frames_ = 0;
    std::unordered_map<uint32_t, StreamState> streams_;
    std::string block_;
    uint32_t block_stream_ = 0;
    bool block_end_stream_ = false;
    bool in_header_block_ = false;
};

class FuzzTransport final : public portico::http2::Carrier {
public:
    explicit FuzzTransport(int fd) : fd_(fd) {
        peer_.v4.sin_family = AF_INET;
        peer_.v4.sin_port = htons(40000);
        peer_.v4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    }
    void attach(portico::http2::Session& session) { session_ = &session; }

    OutputQueue::FlushResult write(OutputQueue& output, uint64_t& sent) override {
        FUZZ_CHECK(!ended);
        uint64_t before = sent;
        OutputQueue::FlushResult result = output.flush(fd_, sent);
        FUZZ_CHECK(result != OutputQueue::FlushResult::failed);
        written += sent - before;
        return result;
    }
    void set_output_blocked(bool now_blocked) override {
        FUZZ_CHECK(!ended);
        blocked = now_blocked;
    }
    void arm_timer(portico::config::Duration timeout) override {
        FUZZ_CHECK(!ended);
        FUZZ_CHECK(timeout.count() > 0);
        timer_armed = true;
    }
    void disarm_timer() override { timer_armed = false; }
    void end_session() override {
        // ClientConnection::close, inside the session's own call.
        FUZZ_CHECK(!ended);
        ended = true;
        timer_armed = false;
        session_->connection_closed();
    }
    const portico::http::PeerAddress& peer() const override { return peer_; }
    // Cleartext (h2c); it does not own the socketpair's end.
    const portico::transport::Transport& transport() const override { return cleartext_; }

    portico::transport::Socket cleartext_{-1};
    bool blocked = false;
    bool timer_armed = false;
    bool ended = false;
    uint64_t written = 0;

private:
    int fd_;
    portico::http::PeerAddress peer_{};
    portico::http2::Session* session_ = nullptr;
};

// Everything the client end holds now, into the checker.
void client_reads(int fd, OutputChecker& checker) {
    char buffer[64 * 1024];
    for (;;) {
        ssize_t got = ::read(fd, buffer, sizeof buffer);
        if (got <= 0) {
            FUZZ_CHECK(got == 0 || errno == EAGAIN || errno == EWOULDBLOCK);
            return;
        }
        checker.add(buffer, static_cast<size_t>(got));
    }
}

// The client reads; a blocked session hears the socket is writable, again
// while that moves bytes.
void pump(World& world, FuzzTransport& transport, portico::http2::Session& session,
          OutputChecker& checker) {
    for (int round = 0; round < 64; ++round) {
        uint64_t read_before = checker.received();
        client_reads(world.client_fd, checker);
        if (transport.ended || !transport.blocked) return;
        uint64_t written_before = transport.written;
        session.on_writable();
        if (checker.received() == read_before && transport.written == written_before) return;
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t length) {
    // Never freed (a worker's state lives as long as it): no destructor runs
    // at exit, and LeakSanitizer sees it reachable.
    static World& world = *new World;
    portico::fuzz::Splits splits(data, length);
    uint8_t choice = 0;
    if (length > 0) {
        choice = data[0];
        ++data;
        --length;
    }
    std::string input(reinterpret_cast<const char*>(data), length);
    if (!std::string_view(input).starts_with(preface)) input.insert(0, preface);

    OutputChecker checker;
    FuzzTransport transport(world.server_fd);
    auto session = std::make_unique<portico::http2::Session>(*world.server, transport);
    transport.attach(*session);
    // Over TLS the connection has the session send before the client's
    // preface is in; over h2c the preface came first.
    if (choice & send_first) session->send();
    bool client_reads_now = !(choice & client_reads_late);
    size_t position = 0;
    bool first = true;
    while (position < input.size() && !transport.ended) {
        size_t size = std::min(splits.size, input.size() - position);
        session->receive(input.data() + position, size);
        position += size;
        if (client_reads_now) pump(world, transport, *session, checker);
        if (first && (choice & drain_after_first) && !transport.ended) session->drain();
        first = false;
        if ((choice & timeout_after_each) && transport.timer_armed && !transport.ended)
            session->on_timeout();
        if ((choice & writable_after_each) && !transport.ended) session->on_writable();
    }
    // A loop turn: what handlers or the poller left for later.
    world.server->poller.turn(0);
    if (!transport.ended) pump(world, transport, *session, checker);
    // At rest, a session that goes on has a timer: keepalive, body or
    // send timeout. (Only a proxied request, whose handler has timeouts of
    // its own, may leave it off, and this config has no proxy.) This
    // found streams that disarmed every timer: a body a non-streaming
    // location waited for, a header block without its END_HEADERS.
    if (!transport.ended) FUZZ_CHECK(transport.timer_armed);
    if ((choice & timeout_at_end) && transport.timer_armed && !transport.ended) {
        session->on_timeout();
        if (!transport.ended) pump(world, transport, *session, checker);
    }
    // The client end is read dry: nothing is left for the next input.
    client_reads(world.client_fd, checker);
    FUZZ_CHECK(checker.received() == transport.written);
    FUZZ_CHECK(session->written() == transport.written);
    // Everything the session made was written: the client has whole frames.
    if (session->output_end() == session->written()) FUZZ_CHECK(checker.at_frame_boundary());
    if (!transport.ended) session->connection_closed();
    world.server->poller.turn(0);
    session.reset();
    return 0;
}
