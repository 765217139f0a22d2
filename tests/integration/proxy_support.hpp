// What the proxy tests share: a config with an upstream pool, a response
// reader that accepts any framing the proxy may choose (Content-Length,
// chunked, or the end of the connection) and can stop after the head, and
// small probes (a closed port, a worker's resident memory).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness.hpp"

namespace portico::test {

// [server] with one worker (pools and balancers are per worker, so one
// worker makes every count exact), [upstream.app] with `servers`, and one
// prefix "/" location proxying to it. The option strings are TOML lines
// added to each table.
std::string proxy_config(const std::vector<std::string>& servers,
                         const std::string& upstream_options = "",
                         const std::string& location_options = "",
                         const std::string& server_options = "");

// "GET TARGET HTTP/1.1\r\nHost: HOST\r\nEXTRA\r\n" (extra: "Name: value\r\n" lines).
std::string get_request(const std::string& target, const std::string& extra = "",
                        const std::string& host = "front.example");

// Where a ResponseReader's bytes come from when they are not a plain
// socket's (a TLS client): up to `size` bytes, 0 at the end of the stream,
// -1 when nothing came within timeout_ms.
class ByteSource {
public:
    virtual ~ByteSource() = default;
    virtual ssize_t read_some(char* buffer, size_t size, int timeout_ms) = 0;
};

class ResponseReader {
public:
    explicit ResponseReader(int fd) : fd_(fd) {}
    explicit ResponseReader(ByteSource& source) : source_(&source) {}

    // One whole response, body decoded; nullopt when it did not arrive
    // complete (timeout, or the connection ended first).
    std::optional<Response> read(std::chrono::milliseconds timeout = 5s, bool head_request = false);
    std::optional<Response> read_head(std::chrono::milliseconds timeout = 5s);
    // The body after read_head(); nullopt when incomplete.
    std::optional<std::string> read_body(const Response& head, std::chrono::milliseconds timeout,
                                         bool head_request = false);
    // Raw bytes: waits until `text` is buffered / `count` bytes are / EOF.
    bool read_until(std::string_view text, std::chrono::milliseconds timeout);
    bool read_at_least(size_t count, std::chrono::milliseconds timeout);
    // Everything buffered plus the rest up to EOF; nullopt on timeout.
    std::optional<std::string> read_until_close(std::chrono::milliseconds timeout);
    const std::string& buffered() const { return buffer_; }
    void discard() { buffer_.clear(); }
    bool eof() const { return eof_; }
    // How the last body read was framed: "length", "chunked", "close" or "none".
    const std::string& framing() const { return framing_; }

private:
    using Deadline = std::chrono::steady_clock::time_point;
    bool fill(Deadline deadline);
    std::optional<std::string> read_chunked(Deadline deadline);

    int fd_ = -1;
    ByteSource* source_ = nullptr;
    std::string buffer_;
    bool eof_ = false;
    std::string framing_;
};

// One request on a new connection, any framing; nullopt when incomplete.
std::optional<Response> proxy_fetch(uint16_t port, const std::string& request,
                                    std::chrono::milliseconds timeout = 5s);

// A request for `target` with Accept-Encoding: `accept` (none when empty)
// and `extra` header lines, on a new connection.
std::optional<Response> fetch_encoded(uint16_t port, const std::string& target, const std::string& accept,
                                      const std::string& extra = "", const std::string& method = "GET");

// `config` with a [metrics] listener on `metrics_port`.
std::string with_metrics(const std::string& config, uint16_t metrics_port);
// The value of one series, written as on /metrics ("name" or
// "name{labels}"); -1 when absent or unreadable.
double metric(uint16_t metrics_port, const std::string& series);

// portico_upstream_errors_total of one server of proxy_config's upstream
// "app", by kind (connect, timeout, reset, bad_response, tls).
double upstream_errors(uint16_t metrics_port, const std::string& server_address,
                       const std::string& kind);

// A loopback port nothing listens on (bound, then closed).
uint16_t unused_port();

// A loopback listener whose accept queue is full: a connect to it hangs
// (the kernel drops the SYNs), as to a host that does not answer.
class FullListener {
public:
    FullListener();
    ~FullListener();
    FullListener(const FullListener&) = delete;
    FullListener& operator=(const FullListener&) = delete;
    uint16_t port() const { return port_; }

private:
    int listen_fd_ = -1;
    int queued_fd_ = -1;
    uint16_t port_ = 0;
};
// VmRSS of a process, in KiB (0 when unreadable).
long resident_kib(pid_t pid);
// Milliseconds since `start`.
long long ms_since(std::chrono::steady_clock::time_point start);
// Case-insensitive search (header names in raw heads).
bool contains_ignoring_case(std::string_view haystack, std::string_view needle);

}  // namespace portico::test
