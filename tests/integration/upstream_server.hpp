// A real HTTP/1.1 origin for the proxy tests: it listens on loopback, records
// every request exactly as it came off the wire, and answers with a scripted
// Reply chosen per request by the test (fixed, chunked with pauses, huge,
// cut in the middle, silent, garbage, WebSocket echo...). One thread accepts,
// one thread serves each connection; every wait also watches a stop event, so
// the destructor returns at once and never hangs a test.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace portico::test {

// One request as the upstream read it.
struct ReceivedRequest {
    std::string head;  // request line and headers, including the final empty line
    std::string method;
    std::string target;
    std::string version;
    std::vector<std::pair<std::string, std::string>> headers;  // as sent, in order
    std::string body;                                          // chunked framing removed
    std::string raw_body;  // as it came, framing and trailers included
    bool chunked = false;
    size_t connection = 0;           // 1-based, in accept order
    size_t index_on_connection = 0;  // 0 for a connection's first request
    uint16_t peer_port = 0;
    std::chrono::steady_clock::time_point received_at;

    // The first header with this name (case-insensitive), or "".
    std::string header(std::string_view name) const;
    size_t count(std::string_view name) const;
    bool has(std::string_view name) const { return count(name) > 0; }
};

// What the upstream does with one request: steps in order, then what becomes
// of the connection.
struct Reply {
    struct Step {
        enum class Kind { send, pause, send_pattern, wait_release } kind;
        std::string bytes;                // send
        std::chrono::milliseconds pause;  // pause
        uint64_t pattern_size = 0;        // send_pattern
    };
    enum class Then {
        keep_alive,  // read the next request (unless the request said Connection: close)
        close,       // close the connection
        hang,        // keep the connection open, read and ignore, until the peer closes
        tunnel,      // echo every byte back until the peer closes (after a 101)
    };
    std::vector<Step> steps;
    Then then = Then::keep_alive;

    Reply& send(std::string bytes);
    Reply& pause(std::chrono::milliseconds duration);
    // `size` bytes of pattern_bytes(), generated while sending (no big buffer).
    Reply& send_pattern(uint64_t size);
    // Waits until UpstreamServer::release_held() (or the peer closes).
    Reply& wait_release();
    // Waits `duration` before the first step.
    Reply& delayed(std::chrono::milliseconds duration);
    Reply& then_do(Then what);

    // status line, Content-Type: text/plain, Content-Length, extra headers
    // ("Name: value\r\n" each), body.
    static Reply text(int status, std::string body, std::string extra_headers = "");
    // Transfer-Encoding: chunked, one chunk per element, `gap` before each
    // chunk after the first and before the last-chunk.
    static Reply chunked(std::vector<std::string> chunks, std::chrono::milliseconds gap,
                         std::string extra_headers = "");
    // 200 with Content-Length `size` and pattern bytes.
    static Reply pattern(uint64_t size);
    // Bytes as given, then `then`.
    static Reply raw(std::string bytes, Then then = Then::close);
    // Never answers.
    static Reply silence();
    // 101 Switching Protocols, then echoes raw bytes both ways.
    static Reply websocket(std::string accept = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
};

// A chunked response head and `count` small chunks, each different (a
// repeated or lost chunk shows), for Reply::raw; `body` is what they decode to.
struct ManyChunks {
    std::string raw;
    std::string body;
    explicit ManyChunks(int count);
};

using Behaviour = std::function<Reply(const ReceivedRequest&)>;

// 200 "ok <target>" for every request.
Reply answer_ok(const ReceivedRequest& request);

// The deterministic bytes of send_pattern: byte i is i % 251 (a prime, so a
// lost or repeated block of any power-of-two size shows).
char pattern_byte(uint64_t offset);
std::string pattern_bytes(uint64_t offset, size_t count);

// One accepted connection, as the upstream saw it.
struct ConnectionRecord {
    uint16_t peer_port = 0;
    size_t requests = 0;
    uint64_t bytes_sent = 0;  // response bytes the peer's socket accepted
    bool open = true;
    bool closed_by_peer = false;  // EOF or reset from the proxy (not our own close)
    std::chrono::steady_clock::time_point accepted_at;
    std::chrono::steady_clock::time_point last_reply_at;  // end of the last reply
    std::chrono::steady_clock::time_point closed_at;
};

// Where an UpstreamServer listens instead of loopback TCP.
struct UnixSocketPath {
    std::string path;
};

class UpstreamServer {
public:
    // Port 0 takes an ephemeral port; another port (a server coming back up)
    // is bound with SO_REUSEADDR. Any 127.x.y.z works on Linux without
    // setup: the resolve tests put a name's addresses there. Throws when it
    // cannot listen.
    explicit UpstreamServer(Behaviour behaviour = answer_ok, uint16_t port = 0,
                            std::string ip = "127.0.0.1");
    // On a Unix socket at `socket.path` (removed again by the destructor):
    // address() is "unix:PATH", port() 0, and peer ports are 0.
    UpstreamServer(UnixSocketPath socket, Behaviour behaviour = answer_ok);
    ~UpstreamServer();
    UpstreamServer(const UpstreamServer&) = delete;
    UpstreamServer& operator=(const UpstreamServer&) = delete;

    uint16_t port() const { return port_; }
    std::string address() const;  // "IP:PORT", or "unix:PATH"

    void set_behaviour(Behaviour behaviour);
    // Closes a connection that has been idle this long after a reply (or
    // its accept), like Node's keepAliveTimeout; 0 = never.
    void set_idle_close(std::chrono::milliseconds after);
    // Connections accepted from now on keep Nagle's algorithm (no
    // TCP_NODELAY), like an upstream that never turns it off (the JDK's
    // HttpServer): a small write waits for the ACK of the previous one.
    void keep_nagle();
    // Lets every wait_release() step, now and later, go on.
    void release_held();

    size_t connections_accepted() const;
    size_t connections_open() const;
    size_t connections_closed_by_peer() const;
    std::vector<ConnectionRecord> connections() const;
    size_t request_count() const;
    std::vector<ReceivedRequest> requests() const;
    ReceivedRequest last_request() const;  // empty when none came yet

    // Polls `condition` until it holds or `timeout` passes.
    static bool wait_until(const std::function<bool()>& condition,
                           std::chrono::milliseconds timeout);
    bool wait_for_requests(size_t count, std::chrono::milliseconds timeout) const;

private:
    class Connection;
    friend class Connection;

    void start_accepting();
    void accept_loop();
    void serve(int fd, size_t index);
    void record_request(ReceivedRequest request);
    void update_connection(size_t index, const std::function<void(ConnectionRecord&)>& change);

    std::string ip_;
    std::string unix_path_;  // set: a Unix socket
    int listen_fd_ = -1;
    int stop_fd_ = -1;  // an eventfd, readable once the server stops
    uint16_t port_ = 0;
    std::atomic<bool> released_{false};
    std::atomic<int64_t> idle_close_ms_{0};
    std::atomic<bool> nodelay_{true};

    mutable std::mutex mutex_;
    Behaviour behaviour_;
    std::vector<ReceivedRequest> requests_;
    std::vector<ConnectionRecord> connections_;
    std::vector<std::thread> connection_threads_;
    std::thread accept_thread_;
};

}  // namespace portico::test
