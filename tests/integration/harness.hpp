// What the integration tests need to drive the real portico binary: a temp
// folder, the server process started on an ephemeral loopback port, and a raw
// HTTP client over a socket (so the tests see the exact bytes).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace portico::test {

using namespace std::chrono_literals;

class TempDir {
public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const { return path_; }
    // Writes `content` to path()/relative, creating folders; returns the full path.
    std::string write(const std::string& relative, const std::string& content) const;

private:
    std::string path_;
};

// What a test may change in how portico is started.
struct LaunchOptions {
    std::vector<std::string> environment;   // "NAME=value", on top of the test's own
    std::vector<int> dropped_capabilities;  // besides the two every start drops
};

// A portico master started with a config text in which "{listen}" stands for
// the listen address (127.0.0.1:0, an ephemeral port). Killed (SIGKILL, by
// pid) if still running when destroyed.
class Portico {
public:
    explicit Portico(const std::string& config_text, const LaunchOptions& options = {});
    ~Portico();
    Portico(const Portico&) = delete;
    Portico& operator=(const Portico&) = delete;

    uint16_t port() const { return port_; }
    pid_t pid() const { return pid_; }
    const TempDir& dir() const { return dir_; }
    std::string config_path() const { return dir_.path() + "/portico.toml"; }
    // Rewrites the config file (same "{listen}" substitution, with our port).
    void rewrite_config(const std::string& config_text) const;

    void signal(int signum) const;
    // Waits for the master to exit; its exit code, or nullopt on timeout.
    std::optional<int> wait_exit(std::chrono::milliseconds timeout);
    std::string log() const;
    // Waits until the error log has `count` lines containing `text`.
    bool wait_for_log(const std::string& text, int count = 1,
                      std::chrono::milliseconds timeout = 10s) const;
    // Worker pids alive now, from the "started worker N (pid P)" lines and
    // the process table.
    std::vector<pid_t> worker_pids() const;

private:
    TempDir dir_;
    pid_t pid_ = -1;
    uint16_t port_ = 0;
    bool exited_ = false;
};

struct Response {
    int status = 0;
    std::string head;  // status line and headers, up to the empty line
    std::map<std::string, std::string> headers;  // lower-cased names
    std::string body;
    std::string header(const std::string& lower_name) const;
};

// A blocking TCP socket connected to 127.0.0.1:port (throws when the
// connect fails); receive_buffer > 0 shrinks SO_RCVBUF first. A small
// max_segment (536) as well keeps the kernel from growing portico's send
// buffer to megabytes, as it otherwise does on loopback: the client's unread
// bytes then stay queued in portico, as behind a slow client on a real network.
int connect_loopback(uint16_t port, int receive_buffer = 0, int max_segment = 0);

// A raw client connection. Every read has a deadline, so a broken server
// fails the test instead of hanging it.
class Client {
public:
    // receive_buffer > 0 shrinks SO_RCVBUF, to make a client that reads
    // slowly; max_segment as for connect_loopback.
    explicit Client(uint16_t port, int receive_buffer = 0, int max_segment = 0);
    ~Client();
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    void send(const std::string& bytes);
    // Reads one response framed by Content-Length (or to EOF without one).
    // `head_request`: the body is absent whatever Content-Length says.
    std::optional<Response> read_response(std::chrono::milliseconds timeout = 5s,
                                          bool head_request = false);
    // Reads until the server closes; nullopt if it did not within timeout.
    std::optional<std::string> read_until_close(std::chrono::milliseconds timeout = 5s);
    // True when the server closed the connection (EOF or reset) within timeout.
    bool closed_by_server(std::chrono::milliseconds timeout = 5s);
    int fd() const { return fd_; }

private:
    bool fill(std::chrono::steady_clock::time_point deadline);
    int fd_ = -1;
    std::string buffered_;
    bool eof_ = false;
};

// One request on a new connection; nullopt when no complete response came.
std::optional<Response> fetch(uint16_t port, const std::string& path,
                              const std::string& extra_headers = "");

// The local port of a connected or bound socket.
uint16_t local_port(int fd);
// What `ss -tHn ARGUMENTS` (iproute2) prints about TCP sockets, one line
// each: add -m for memory, -i for tcp_info, and a filter.
std::string socket_statistics(const std::string& arguments);

// Test data.
bool contains(const std::string& text, const std::string& part);
// A whole file's bytes ("" when it cannot be read).
std::string read_text(const std::string& path);
// Deterministic bytes that do not repeat in any short period.
std::string random_bytes(size_t size, uint64_t seed);

}  // namespace portico::test
