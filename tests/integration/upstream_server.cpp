#include "upstream_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <stdexcept>

namespace portico::test {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

// A request that started arriving must be complete within this time.
constexpr auto request_deadline = 10s;
// The longest the upstream waits for the proxy to take more response bytes.
constexpr auto write_stall_limit = 30s;
constexpr size_t max_head_bytes = 1 << 20;

bool equal_ignoring_case(std::string_view a, std::string_view b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
        return std::tolower(static_cast<unsigned char>(x)) ==
               std::tolower(static_cast<unsigned char>(y));
    });
}

std::string lower(std::string_view text) {
    std::string result(text);
    for (char& c : result) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return result;
}

std::string_view trim(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
    return text;
}

// Clients must not depend on the reason phrase (RFC 9112 4): one will do.
const char* reason(int status) {
    return status == 200 ? "OK" : "Scripted";
}

std::string hex(size_t value) {
    char text[20];
    std::snprintf(text, sizeof text, "%zx", value);
    return text;
}

// Fills `request` from its head; false when the head is not a request.
bool parse_head(const std::string& head, ReceivedRequest& request) {
    size_t line_end = head.find("\r\n");
    std::string_view line(head.data(), line_end);
    size_t first_space = line.find(' ');
    size_t last_space = line.rfind(' ');
    if (first_space == std::string_view::npos || last_space == first_space) return false;
    request.method = line.substr(0, first_space);
    request.target = line.substr(first_space + 1, last_space - first_space - 1);
    request.version = line.substr(last_space + 1);
    for (size_t at = line_end + 2; at < head.size();) {
        size_t end = head.find("\r\n", at);
        if (end == std::string::npos || end == at) break;
        std::string_view header(head.data() + at, end - at);
        size_t colon = header.find(':');
        if (colon != std::string_view::npos)
            request.headers.emplace_back(header.substr(0, colon), trim(header.substr(colon + 1)));
        at = end + 2;
    }
    return true;
}

}  // namespace

std::string ReceivedRequest::header(std::string_view name) const {
    for (const auto& [key, value] : headers)
        if (equal_ignoring_case(key, name)) return value;
    return {};
}

size_t ReceivedRequest::count(std::string_view name) const {
    return static_cast<size_t>(std::count_if(headers.begin(), headers.end(), [name](const auto& h) {
        return equal_ignoring_case(h.first, name);
    }));
}

Reply& Reply::send(std::string bytes) {
    steps.push_back({Step::Kind::send, std::move(bytes), 0ms, 0});
    return *this;
}

Reply& Reply::pause(std::chrono::milliseconds duration) {
    steps.push_back({Step::Kind::pause, {}, duration, 0});
    return *this;
}

Reply& Reply::send_pattern(uint64_t size) {
    steps.push_back({Step::Kind::send_pattern, {}, 0ms, size});
    return *this;
}

Reply& Reply::wait_release() {
    steps.push_back({Step::Kind::wait_release, {}, 0ms, 0});
    return *this;
}

Reply& Reply::delayed(std::chrono::milliseconds duration) {
    steps.insert(steps.begin(), {Step::Kind::pause, {}, duration, 0});
    return *this;
}

Reply& Reply::then_do(Then what) {
    then = what;
    return *this;
}

Reply Reply::text(int status, std::string body, std::string extra_headers) {
    Reply reply;
    reply.send("HTTP/1.1 " + std::to_string(status) + " " + reason(status) +
               "\r\nContent-Type: text/plain\r\nContent-Length: " + std::to_string(body.size()) +
               "\r\n" + extra_headers + "\r\n" + body);
    return reply;
}

Reply Reply::chunked(std::vector<std::string> chunks, std::chrono::milliseconds gap,
                     std::string extra_headers) {
    Reply reply;
    reply.send("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n" +
               extra_headers + "\r\n");
    for (size_t i = 0; i < chunks.size(); ++i) {
        if (i > 0 && gap > 0ms) reply.pause(gap);
        // An empty chunk would be the last-chunk marker: nothing to send.
        if (chunks[i].empty()) continue;
        reply.send(hex(chunks[i].size()) + "\r\n" + chunks[i] + "\r\n");
    }
    if (gap > 0ms) reply.pause(gap);
    reply.send("0\r\n\r\n");
    return reply;
}

Reply Reply::pattern(uint64_t size) {
    Reply reply;
    reply.send("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: " +
               std::to_string(size) + "\r\n\r\n");
    reply.send_pattern(size);
    return reply;
}

Reply Reply::raw(std::string bytes, Then then) {
    Reply reply;
    reply.send(std::move(bytes));
    reply.then = then;
    return reply;
}

ManyChunks::ManyChunks(int count)
    : raw("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n") {
    for (int i = 0; i < count; ++i) {
        char piece[64];
        int length = snprintf(piece, sizeof piece, "chunk %09d of a response of many chunks;\n", i);
        char size_line[16];
        snprintf(size_line, sizeof size_line, "%x\r\n", length);
        body.append(piece, static_cast<size_t>(length));
        raw += size_line;
        raw.append(piece, static_cast<size_t>(length));
        raw += "\r\n";
    }
    raw += "0\r\n\r\n";
}

Reply Reply::silence() {
    Reply reply;
    reply.then = Then::hang;
    return reply;
}

Reply Reply::websocket(std::string accept) {
    Reply reply;
    reply.send(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Accept: " +
        accept + "\r\n\r\n");
    reply.then = Then::tunnel;
    return reply;
}

Reply answer_ok(const ReceivedRequest& request) {
    return Reply::text(200, "ok " + request.target);
}

char pattern_byte(uint64_t offset) {
    return static_cast<char>(offset % 251);
}

std::string pattern_bytes(uint64_t offset, size_t count) {
    std::string bytes(count, '\0');
    for (size_t i = 0; i < count; ++i) bytes[i] = pattern_byte(offset + i);
    return bytes;
}

// --- one connection, on its own thread ------------------------------------

class UpstreamServer::Connection {
public:
    Connection(UpstreamServer& server, int fd, size_t index)
        : server_(server), fd_(fd), index_(index) {}
    ~Connection() { ::close(fd_); }

    void run() {
        Outcome outcome = Outcome::ok;
        for (size_t served = 0; outcome == Outcome::ok; ++served) {
            ReceivedRequest request;
            outcome = read_request(request);
            if (outcome != Outcome::ok) break;
            request.connection = index_;
            request.index_on_connection = served;
            request.received_at = Clock::now();
            bool close_after = wants_close(request);
            Behaviour behaviour;
            {
                std::lock_guard lock(server_.mutex_);
                behaviour = server_.behaviour_;
            }
            server_.record_request(request);
            server_.update_connection(index_, [](ConnectionRecord& r) { ++r.requests; });
            outcome = play(behaviour(request));
            if (outcome == Outcome::ok && close_after) outcome = Outcome::done;
        }
        auto now = Clock::now();
        bool by_peer = outcome == Outcome::peer_closed;
        server_.update_connection(index_, [&](ConnectionRecord& r) {
            r.open = false;
            r.closed_by_peer = by_peer;
            r.closed_at = now;
        });
        if (!by_peer) ::shutdown(fd_, SHUT_WR);
    }

private:
    enum class Outcome { ok, done, peer_closed, timed_out, stopped, bad };
    using Deadline = std::optional<Clock::time_point>;

    static bool wants_close(const ReceivedRequest& request) {
        std::string connection = lower(request.header("connection"));
        if (connection.find("close") != std::string::npos) return true;
        return request.version == "HTTP/1.0" && connection.find("keep-alive") == std::string::npos;
    }

    // One read into input_; ok when bytes came.
    Outcome fill(Deadline deadline) {
        int timeout = -1;
        if (deadline) {
            auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now());
            if (left.count() <= 0) return Outcome::timed_out;
            timeout = static_cast<int>(left.count()) + 1;
        }
        pollfd fds[2] = {{fd_, POLLIN, 0}, {server_.stop_fd_, POLLIN, 0}};
        int ready = ::poll(fds, 2, timeout);
        if (ready < 0 && errno == EINTR) return Outcome::ok;
        if (fds[1].revents != 0) return Outcome::stopped;
        if (ready == 0) return Outcome::timed_out;
        char chunk[256 * 1024];
        ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) return Outcome::ok;
        if (n <= 0) return Outcome::peer_closed;
        input_.append(chunk, static_cast<size_t>(n));
        return Outcome::ok;
    }

    Outcome fill_until(size_t size, Deadline deadline) {
        while (input_.size() < size)
            if (Outcome outcome = fill(deadline); outcome != Outcome::ok) return outcome;
        return Outcome::ok;
    }

    // The next "\r\n" at or after `from`, reading more as needed.
    Outcome find_line_end(size_t from, Deadline deadline, size_t& line_end) {
        while ((line_end = input_.find("\r\n", from)) == std::string::npos) {
            // The line alone: a chunked body before it may be larger.
            if (input_.size() - from > max_head_bytes) return Outcome::bad;
            if (Outcome outcome = fill(deadline); outcome != Outcome::ok) return outcome;
        }
        return Outcome::ok;
    }

    Outcome read_request(ReceivedRequest& request) {
        int64_t idle_ms = server_.idle_close_ms_.load();
        Deadline idle_deadline;
        if (idle_ms > 0) idle_deadline = idle_since_ + std::chrono::milliseconds(idle_ms);
        while (input_.empty())
            if (Outcome outcome = fill(idle_deadline); outcome != Outcome::ok) return outcome;
        Deadline deadline = Clock::now() + request_deadline;
        size_t head_end;
        while ((head_end = input_.find("\r\n\r\n")) == std::string::npos) {
            if (input_.size() > max_head_bytes) return Outcome::bad;
            if (Outcome outcome = fill(deadline); outcome != Outcome::ok) return outcome;
        }
        request.head = input_.substr(0, head_end + 4);
        input_.erase(0, head_end + 4);
        if (!parse_head(request.head, request)) return Outcome::bad;
        if (lower(request.header("transfer-encoding")).find("chunked") != std::string::npos) {
            request.chunked = true;
            return read_chunked_body(request, deadline);
        }
        if (std::string length = request.header("content-length"); !length.empty()) {
            size_t size = std::stoull(length);
            if (Outcome outcome = fill_until(size, deadline); outcome != Outcome::ok)
                return outcome;
            request.body = input_.substr(0, size);
            request.raw_body = request.body;
            input_.erase(0, size);
        }
        return Outcome::ok;
    }

    Outcome read_chunked_body(ReceivedRequest& request, Deadline deadline) {
        size_t at = 0;
        for (;;) {
            size_t line_end;
            if (Outcome outcome = find_line_end(at, deadline, line_end); outcome != Outcome::ok)
                return outcome;
            size_t size = std::strtoull(input_.c_str() + at, nullptr, 16);
            at = line_end + 2;
            if (size == 0) break;
            if (Outcome outcome = fill_until(at + size + 2, deadline); outcome != Outcome::ok)
                return outcome;
            request.body.append(input_, at, size);
            at += size + 2;
        }
        // Trailer fields, up to an empty line.
        for (;;) {
            size_t line_end;
            if (Outcome outcome = find_line_end(at, deadline, line_end); outcome != Outcome::ok)
                return outcome;
            bool empty = line_end == at;
            at = line_end + 2;
            if (empty) break;
        }
        request.raw_body = input_.substr(0, at);
        input_.erase(0, at);
        return Outcome::ok;
    }

    Outcome write_all(std::string_view bytes) {
        while (!bytes.empty()) {
            ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n > 0) {
                bytes.remove_prefix(static_cast<size_t>(n));
                server_.update_connection(
                    index_, [n](ConnectionRecord& r) { r.bytes_sent += static_cast<uint64_t>(n); });
                continue;
            }
            if (n < 0 && errno == EINTR) continue;
            if (n < 0 && errno != EAGAIN) return Outcome::peer_closed;
            pollfd fds[2] = {{fd_, POLLOUT, 0}, {server_.stop_fd_, POLLIN, 0}};
            int ready = ::poll(
                fds, 2, static_cast<int>(std::chrono::milliseconds(write_stall_limit).count()));
            if (fds[1].revents != 0) return Outcome::stopped;
            if (ready == 0) return Outcome::timed_out;
        }
        return Outcome::ok;
    }

    Outcome send_pattern(uint64_t size) {
        std::string block;
        for (uint64_t sent = 0; sent < size;) {
            size_t count = static_cast<size_t>(std::min<uint64_t>(size - sent, 64 * 1024));
            block = pattern_bytes(sent, count);
            if (Outcome outcome = write_all(block); outcome != Outcome::ok) return outcome;
            sent += count;
        }
        return Outcome::ok;
    }

    // Waits, still reading, so that a peer that goes away is seen at once.
    Outcome pause(std::chrono::milliseconds duration) {
        Deadline deadline = Clock::now() + duration;
        for (;;) {
            Outcome outcome = fill(deadline);
            if (outcome == Outcome::timed_out) return Outcome::ok;
            if (outcome != Outcome::ok) return outcome;
        }
    }

    Outcome wait_release() {
        while (!server_.released_.load())
            if (Outcome outcome = pause(10ms); outcome != Outcome::ok) return outcome;
        return Outcome::ok;
    }

    Outcome hang() {
        for (;;) {
            input_.clear();
            if (Outcome outcome = fill(std::nullopt); outcome != Outcome::ok) return outcome;
        }
    }

    Outcome tunnel() {
        for (;;) {
            if (!input_.empty()) {
                if (Outcome outcome = write_all(input_); outcome != Outcome::ok) return outcome;
                input_.clear();
            }
            if (Outcome outcome = fill(std::nullopt); outcome != Outcome::ok) return outcome;
        }
    }

    Outcome play(const Reply& reply) {
        for (const Reply::Step& step : reply.steps) {
            Outcome outcome = Outcome::ok;
            switch (step.kind) {
            case Reply::Step::Kind::send:
                outcome = write_all(step.bytes);
                break;
            case Reply::Step::Kind::pause:
                outcome = pause(step.pause);
                break;
            case Reply::Step::Kind::send_pattern:
                outcome = send_pattern(step.pattern_size);
                break;
            case Reply::Step::Kind::wait_release:
                outcome = wait_release();
                break;
            }
            if (outcome != Outcome::ok) return outcome;
        }
        idle_since_ = Clock::now();
        server_.update_connection(index_,
                                  [this](ConnectionRecord& r) { r.last_reply_at = idle_since_; });
        switch (reply.then) {
        case Reply::Then::keep_alive:
            return Outcome::ok;
        case Reply::Then::close:
            return Outcome::done;
        case Reply::Then::hang:
            return hang();
        case Reply::Then::tunnel:
            return tunnel();
        }
        return Outcome::done;
    }

    UpstreamServer& server_;
    int fd_;
    size_t index_;
    std::string input_;
    Clock::time_point idle_since_ = Clock::now();
};

// --- the server -----------------------------------------------------------

UpstreamServer::UpstreamServer(Behaviour behaviour, uint16_t port, std::string ip)
    : ip_(std::move(ip)), behaviour_(std::move(behaviour)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int on = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    socklen_t length = sizeof address;
    if (inet_pton(AF_INET, ip_.c_str(), &address.sin_addr) != 1 ||
        ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(listen_fd_, 512) != 0 ||
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
        std::string why = std::strerror(errno);
        ::close(listen_fd_);
        throw std::runtime_error("upstream server cannot listen on " + ip_ + ":" +
                                 std::to_string(port) + ": " + why);
    }
    port_ = ntohs(address.sin_port);
    start_accepting();
}

UpstreamServer::UpstreamServer(UnixSocketPath socket, Behaviour behaviour)
    : unix_path_(std::move(socket.path)), behaviour_(std::move(behaviour)) {
    listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (unix_path_.size() >= sizeof address.sun_path)
        throw std::runtime_error("Unix socket path too long: " + unix_path_);
    std::memcpy(address.sun_path, unix_path_.data(), unix_path_.size());
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(listen_fd_, 512) != 0) {
        std::string why = std::strerror(errno);
        ::close(listen_fd_);
        throw std::runtime_error("upstream server cannot listen on " + unix_path_ + ": " + why);
    }
    start_accepting();
}

void UpstreamServer::start_accepting() {
    stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    accept_thread_ = std::thread([this] { accept_loop(); });
}

UpstreamServer::~UpstreamServer() {
    uint64_t one = 1;
    (void)!::write(stop_fd_, &one, sizeof one);
    accept_thread_.join();
    std::vector<std::thread> threads;
    {
        std::lock_guard lock(mutex_);
        threads.swap(connection_threads_);
    }
    for (std::thread& thread : threads) thread.join();
    ::close(listen_fd_);
    ::close(stop_fd_);
    if (!unix_path_.empty()) ::unlink(unix_path_.c_str());
}

std::string UpstreamServer::address() const {
    if (!unix_path_.empty()) return "unix:" + unix_path_;
    return ip_ + ":" + std::to_string(port_);
}

void UpstreamServer::accept_loop() {
    for (;;) {
        pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
        if (::poll(fds, 2, -1) < 0 && errno != EINTR) return;
        if (fds[1].revents != 0) return;
        sockaddr_storage peer{};
        socklen_t length = sizeof peer;
        int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer), &length,
                           SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) continue;
        int on = 1;
        bool tcp = peer.ss_family == AF_INET;
        // Each scripted write leaves at once: the streaming tests time the chunks.
        if (nodelay_ && tcp) ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
        std::lock_guard lock(mutex_);
        ConnectionRecord record;
        record.peer_port = tcp ? ntohs(reinterpret_cast<const sockaddr_in&>(peer).sin_port) : 0;
        record.accepted_at = Clock::now();
        record.last_reply_at = record.accepted_at;
        connections_.push_back(record);
        size_t index = connections_.size();
        connection_threads_.emplace_back([this, fd, index] { serve(fd, index); });
    }
}

void UpstreamServer::serve(int fd, size_t index) {
    Connection connection(*this, fd, index);
    connection.run();
}

void UpstreamServer::record_request(ReceivedRequest request) {
    std::lock_guard lock(mutex_);
    request.peer_port = connections_[request.connection - 1].peer_port;
    requests_.push_back(std::move(request));
}

void UpstreamServer::update_connection(size_t index,
                                       const std::function<void(ConnectionRecord&)>& change) {
    std::lock_guard lock(mutex_);
    change(connections_[index - 1]);
}

void UpstreamServer::set_behaviour(Behaviour behaviour) {
    std::lock_guard lock(mutex_);
    behaviour_ = std::move(behaviour);
}

void UpstreamServer::keep_nagle() { nodelay_ = false; }

void UpstreamServer::set_idle_close(std::chrono::milliseconds after) {
    idle_close_ms_ = after.count();
}

void UpstreamServer::release_held() {
    released_ = true;
}

size_t UpstreamServer::connections_accepted() const {
    std::lock_guard lock(mutex_);
    return connections_.size();
}

size_t UpstreamServer::connections_open() const {
    std::lock_guard lock(mutex_);
    return static_cast<size_t>(std::count_if(connections_.begin(), connections_.end(),
                                             [](const ConnectionRecord& r) { return r.open; }));
}

size_t UpstreamServer::connections_closed_by_peer() const {
    std::lock_guard lock(mutex_);
    return static_cast<size_t>(
        std::count_if(connections_.begin(), connections_.end(),
                      [](const ConnectionRecord& r) { return r.closed_by_peer; }));
}

std::vector<ConnectionRecord> UpstreamServer::connections() const {
    std::lock_guard lock(mutex_);
    return connections_;
}

size_t UpstreamServer::request_count() const {
    std::lock_guard lock(mutex_);
    return requests_.size();
}

std::vector<ReceivedRequest> UpstreamServer::requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
}

ReceivedRequest UpstreamServer::last_request() const {
    std::lock_guard lock(mutex_);
    return requests_.empty() ? ReceivedRequest{} : requests_.back();
}

bool UpstreamServer::wait_until(const std::function<bool()>& condition,
                                std::chrono::milliseconds timeout) {
    auto deadline = Clock::now() + timeout;
    while (!condition()) {
        if (Clock::now() >= deadline) return false;
        std::this_thread::sleep_for(5ms);
    }
    return true;
}

bool UpstreamServer::wait_for_requests(size_t count, std::chrono::milliseconds timeout) const {
    return wait_until([&] { return request_count() >= count; }, timeout);
}

}  // namespace portico::test
