// What the HTTP/2 tests share: a small HTTP/2 client of our own that works at
// the frame level (RFC 9113), over cleartext (h2c with prior knowledge) or
// TLS (h2 by ALPN). It sees every frame the server sends, in order (a trace
// for the failure messages), and can send any frame, well-formed or not, so
// the same client drives the ordinary requests and the abuse.
//
// What it does for itself, each switchable for the tests that must not:
// acknowledging SETTINGS and PING, giving back receive windows
// (WINDOW_UPDATE for every DATA), and sending request bodies only as far as
// the server's windows allow (waiting for its WINDOW_UPDATEs). Header blocks
// are HPACK-encoded with nghttp2's deflater (libnghttp2, Debian's) and
// decoded with its inflater; hpack_literal() and friends hand-encode the
// fields nghttp2 would not.
#pragma once

#include <nghttp2/nghttp2.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "harness.hpp"
#include "tls_support.hpp"

namespace portico::test::h2 {

// Frame types, flags and error codes (RFC 9113 6, 7).
enum : uint8_t {
    DATA = 0x0,
    HEADERS = 0x1,
    PRIORITY = 0x2,
    RST_STREAM = 0x3,
    SETTINGS = 0x4,
    PUSH_PROMISE = 0x5,
    PING = 0x6,
    GOAWAY = 0x7,
    WINDOW_UPDATE = 0x8,
    CONTINUATION = 0x9,
};
enum : uint8_t {
    FLAG_END_STREAM = 0x1,
    FLAG_ACK = 0x1,
    FLAG_END_HEADERS = 0x4,
    FLAG_PADDED = 0x8,
    FLAG_PRIORITY = 0x20,
};
enum : uint32_t {
    NO_ERROR = 0x0,
    PROTOCOL_ERROR = 0x1,
    INTERNAL_ERROR = 0x2,
    FLOW_CONTROL_ERROR = 0x3,
    SETTINGS_TIMEOUT = 0x4,
    STREAM_CLOSED = 0x5,
    FRAME_SIZE_ERROR = 0x6,
    REFUSED_STREAM = 0x7,
    CANCEL = 0x8,
    COMPRESSION_ERROR = 0x9,
    CONNECT_ERROR = 0xa,
    ENHANCE_YOUR_CALM = 0xb,
};
enum : uint16_t {
    SETTINGS_HEADER_TABLE_SIZE = 0x1,
    SETTINGS_ENABLE_PUSH = 0x2,
    SETTINGS_MAX_CONCURRENT_STREAMS = 0x3,
    SETTINGS_INITIAL_WINDOW_SIZE = 0x4,
    SETTINGS_MAX_FRAME_SIZE = 0x5,
    SETTINGS_MAX_HEADER_LIST_SIZE = 0x6,
    SETTINGS_NO_RFC7540_PRIORITIES = 0x9,  // RFC 9218
};

const char* frame_type_name(uint8_t type);
const char* error_code_name(uint32_t code);

// RFC 9113 3.4: the client connection preface.
inline constexpr std::string_view client_magic = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

using Fields = std::vector<std::pair<std::string, std::string>>;
using Settings = std::vector<std::pair<uint16_t, uint32_t>>;

// One frame the server sent. A header block split over CONTINUATION frames
// is one Frame (type HEADERS), its fields decoded.
struct Frame {
    uint8_t type = 0;
    uint8_t flags = 0;
    uint32_t stream = 0;
    std::string payload;  // as received (a HEADERS' block: all its fragments)
    Fields fields;        // HEADERS: the decoded header list

    bool has(uint8_t flag) const { return (flags & flag) != 0; }
    uint32_t error_code() const;   // RST_STREAM, GOAWAY
    uint32_t last_stream() const;  // GOAWAY
    uint32_t increment() const;    // WINDOW_UPDATE
    std::string field(std::string_view name) const;  // HEADERS: the first field so named
    std::string describe() const;  // "GOAWAY stream=0 flags=0x0 len=8 last_stream=1 error=NO_ERROR"
};

// ---- making frames -----------------------------------------------------------

std::string frame(uint8_t type, uint8_t flags, uint32_t stream, std::string_view payload);
std::string settings_frame(const Settings& settings);
std::string settings_ack();
std::string ping_frame(std::string_view opaque8, bool ack = false);
std::string window_update_frame(uint32_t stream, uint32_t increment);
std::string rst_stream_frame(uint32_t stream, uint32_t code);
std::string goaway_frame(uint32_t last_stream, uint32_t code);
std::string data_frame(uint32_t stream, std::string_view data, bool end_stream);

// ---- HPACK -------------------------------------------------------------------

// Encodes header lists with nghttp2's deflater (one per connection: the
// dynamic table is the connection's). It writes names as given, upper
// case included.
class HpackEncoder {
public:
    HpackEncoder();
    ~HpackEncoder();
    HpackEncoder(const HpackEncoder&) = delete;
    HpackEncoder& operator=(const HpackEncoder&) = delete;
    std::string encode(const Fields& fields);

private:
    nghttp2_hd_deflater* deflater_ = nullptr;
};

// Hand-made representations (RFC 7541 6), raw strings without Huffman.
std::string hpack_integer(uint64_t value, int prefix_bits, uint8_t first_byte_flags);
// Literal Header Field without Indexing, new name.
std::string hpack_literal(std::string_view name, std::string_view value);
// Literal Header Field with Incremental Indexing, new name (enters the dynamic table).
std::string hpack_literal_indexed(std::string_view name, std::string_view value);
// Indexed Header Field (1..61 static, 62.. dynamic).
std::string hpack_indexed(uint32_t index);

// ---- the client --------------------------------------------------------------

struct ClientOptions {
    bool tls = false;
    TlsOptions tls_options = default_tls_options();
    // The preface and our SETTINGS are sent at once; false: the test sends them.
    bool send_preface = true;
    Settings settings = {{SETTINGS_ENABLE_PUSH, 0}};
    bool auto_ack = true;             // SETTINGS and PING
    bool auto_window_update = true;   // each DATA's bytes given back at once
    // Request bodies wait for the server's windows (false: sent regardless,
    // a flow-control violation on purpose).
    bool respect_windows = true;
    // Cleartext only: SO_RCVBUF and TCP_MAXSEG for the socket, as for
    // connect_loopback (a client that lags behind the server's output).
    int receive_buffer = 0;
    int max_segment = 0;

    static TlsOptions default_tls_options();  // SNI a.test, ALPN h2 then http/1.1
};

// What came back on one stream.
struct StreamResult {
    bool headers_received = false;
    int status = 0;
    Fields headers;          // the response's (the first HEADERS)
    Fields trailers;
    std::string body;
    bool ended = false;      // END_STREAM received
    std::optional<uint32_t> reset;  // RST_STREAM from the server, its code
    int data_frames = 0;
    int window_updates = 0;  // WINDOW_UPDATE frames the server sent for it
    std::string header(std::string_view name) const;
    bool done() const { return ended || reset.has_value(); }
};

class Client {
public:
    Client(uint16_t port, ClientOptions options = {});
    ~Client();
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    // TLS: the handshake's outcome (always true in cleartext).
    bool connected() const { return connected_; }
    const std::string& error() const { return error_; }
    std::string alpn() const;

    // Bytes as given; false once the connection failed.
    bool send_raw(const std::string& bytes);
    void send_preface();

    // The next frame, the client's own bookkeeping done (acknowledgements,
    // windows, stream results); nullopt on timeout or at the end of the
    // connection (closed() then).
    std::optional<Frame> next_frame(std::chrono::milliseconds timeout);
    // Reads frames until one satisfies `match`; nullopt on timeout or close.
    std::optional<Frame> wait_for(const std::function<bool(const Frame&)>& match,
                                  std::chrono::milliseconds timeout = 5s);
    std::optional<Frame> wait_for_type(uint8_t type, std::chrono::milliseconds timeout = 5s);
    // Reads frames until the server closes the connection: true if it did
    // within timeout (EOF or reset).
    bool wait_closed(std::chrono::milliseconds timeout = 5s);
    bool closed() const { return eof_; }
    // Reads (and handles) whatever arrives for `duration`.
    void pump_for(std::chrono::milliseconds duration);

    // ---- requests ----
    // A stream with these fields (pseudo-headers included, in order);
    // `body` (nullopt: none, END_STREAM on the HEADERS) goes out as the
    // windows allow, END_STREAM on its last DATA. Returns the stream id.
    uint32_t request(const Fields& fields, std::optional<std::string> body = std::nullopt);
    // GET/HEAD/...: :method, :scheme (http or https by the transport),
    // :authority, :path, then `extra`.
    uint32_t get(const std::string& path, const Fields& extra = {}, const std::string& method = "GET",
                 const std::string& authority = "a.test");
    static Fields request_fields(const std::string& method, const std::string& path,
                                 const std::string& scheme, const std::string& authority,
                                 const Fields& extra = {});
    std::string scheme() const { return options_.tls ? "https" : "http"; }
    // HEADERS with a block of our own (already encoded), flags as given.
    void send_headers_block(uint32_t stream, const std::string& block, uint8_t flags);
    // Queues body bytes for a stream opened without END_STREAM.
    void send_body(uint32_t stream, const std::string& data, bool end_stream);
    uint32_t next_stream_id() const { return next_stream_; }
    void set_next_stream_id(uint32_t id) { next_stream_ = id; }
    HpackEncoder& encoder() { return encoder_; }

    // Reads until every listed stream is done (ended or reset); false on
    // timeout or close first.
    bool wait_streams(const std::vector<uint32_t>& ids, std::chrono::milliseconds timeout = 10s);
    bool wait_stream(uint32_t id, std::chrono::milliseconds timeout = 10s) {
        return wait_streams({id}, timeout);
    }
    const StreamResult& result(uint32_t id) { return streams_[id]; }
    bool body_pending(uint32_t id) const;

    // What the server said.
    const std::optional<Frame>& goaway() const { return goaway_; }
    std::map<uint16_t, uint32_t> server_settings() const { return server_settings_; }
    bool server_settings_received() const { return server_settings_seen_; }
    int frames_received(uint8_t type) const;
    // Every frame received so far, one line each (and "<closed>" at the end).
    const std::string& trace() const { return trace_; }

    void set_auto_window_update(bool on) { options_.auto_window_update = on; }
    void set_auto_ack(bool on) { options_.auto_ack = on; }
    // Our send windows, as the server's SETTINGS and WINDOW_UPDATEs left them.
    int64_t connection_send_window() const { return connection_window_; }
    int fd() const;
    // Closes the TCP connection with a reset (RST), as a client that vanishes.
    void abort();

private:
    class Pipe;
    class PlainPipe;
    class TlsPipe;

    bool fill(std::chrono::steady_clock::time_point deadline);
    std::optional<Frame> parse_frame();
    void handle(Frame& frame);
    void decode_block(Frame& frame);
    void send_pending_bodies();

    ClientOptions options_;
    std::unique_ptr<Pipe> pipe_;
    bool connected_ = false;
    std::string error_;
    std::string input_;
    bool eof_ = false;
    bool write_failed_ = false;
    HpackEncoder encoder_;
    nghttp2_hd_inflater* inflater_ = nullptr;
    // A header block in progress (HEADERS without END_HEADERS yet).
    std::optional<Frame> block_;

    uint32_t next_stream_ = 1;
    std::map<uint32_t, StreamResult> streams_;
    struct Outgoing {
        std::string data;
        size_t offset = 0;
        bool end_stream = false;
        bool end_sent = false;
    };
    std::map<uint32_t, Outgoing> outgoing_;
    std::map<uint32_t, int64_t> stream_windows_;  // our send windows per stream
    int64_t connection_window_ = 65535;
    uint32_t peer_initial_window_ = 65535;
    uint32_t peer_max_frame_ = 16384;
    std::map<uint16_t, uint32_t> server_settings_;
    bool server_settings_seen_ = false;
    std::optional<Frame> goaway_;
    std::map<uint8_t, int> frame_counts_;
    std::string trace_;
};

// ---- configs and other helpers -----------------------------------------------

// Runs `command` in sh with a deadline (`timeout -k`), stdout + stderr together.
CommandResult run_bounded(const std::string& command, int seconds = 15);

// The values of every sample line of /metrics text that starts with
// `prefix` ("portico_requests_total{location=\"x\","), summed.
double sum_samples(const std::string& text, const std::string& prefix);

}  // namespace portico::test::h2
