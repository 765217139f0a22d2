#include "proxy_support.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <random>
#include <sstream>
#include <utility>

namespace portico::test {

using Clock = std::chrono::steady_clock;

std::string proxy_config(const std::vector<std::string>& servers,
                         const std::string& upstream_options, const std::string& location_options,
                         const std::string& server_options) {
    std::string list;
    for (const std::string& server : servers)
        list += (list.empty() ? "\"" : ", \"") + server + "\"";
    return "[server]\nlisten = [\"{listen}\"]\nworkers = 1\n" + server_options +
           "\n\n[upstream.app]\nservers = [" + list + "]\n" + upstream_options +
           "\n\n[[location]]\nprefix = \"/\"\nproxy = \"app\"\n" + location_options + "\n";
}

std::string get_request(const std::string& target, const std::string& extra,
                        const std::string& host) {
    return "GET " + target + " HTTP/1.1\r\nHost: " + host + "\r\n" + extra + "\r\n";
}

bool ResponseReader::fill(Deadline deadline) {
    if (eof_) return false;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    char chunk[65536];
    ssize_t n;
    if (source_) {
        n = source_->read_some(chunk, sizeof chunk, static_cast<int>(left.count()));
        if (n < 0) return false;
    } else {
        pollfd pfd{fd_, POLLIN, 0};
        if (::poll(&pfd, 1, static_cast<int>(left.count())) <= 0) return false;
        n = ::recv(fd_, chunk, sizeof chunk, 0);
    }
    if (n <= 0) {
        eof_ = true;
        return false;
    }
    buffer_.append(chunk, static_cast<size_t>(n));
    return true;
}

std::optional<Response> ResponseReader::read_head(std::chrono::milliseconds timeout) {
    auto deadline = Clock::now() + timeout;
    size_t end;
    while ((end = buffer_.find("\r\n\r\n")) == std::string::npos)
        if (!fill(deadline)) return std::nullopt;
    Response response;
    response.head = buffer_.substr(0, end);
    buffer_.erase(0, end + 4);
    std::istringstream lines(response.head);
    std::string line;
    std::getline(lines, line);
    if (line.rfind("HTTP/1.", 0) != 0 || line.size() < 12) return std::nullopt;
    response.status = std::atoi(line.c_str() + 9);
    while (std::getline(lines, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        size_t colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::string name = line.substr(0, colon);
        for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        size_t value_start = line.find_first_not_of(' ', colon + 1);
        response.headers[name] = value_start == std::string::npos ? "" : line.substr(value_start);
    }
    return response;
}

std::optional<std::string> ResponseReader::read_chunked(Deadline deadline) {
    std::string body;
    size_t at = 0;
    auto line_end = [&](size_t from) -> size_t {
        size_t end;
        while ((end = buffer_.find("\r\n", from)) == std::string::npos)
            if (!fill(deadline)) return std::string::npos;
        return end;
    };
    for (;;) {
        size_t end = line_end(at);
        if (end == std::string::npos) return std::nullopt;
        if (end == at || !std::isxdigit(static_cast<unsigned char>(buffer_[at])))
            return std::nullopt;  // not a chunk-size line: broken framing
        size_t size = std::strtoull(buffer_.c_str() + at, nullptr, 16);
        at = end + 2;
        if (size == 0) break;
        while (buffer_.size() < at + size + 2)
            if (!fill(deadline)) return std::nullopt;
        body.append(buffer_, at, size);
        at += size + 2;
    }
    for (;;) {  // trailer fields, up to an empty line
        size_t end = line_end(at);
        if (end == std::string::npos) return std::nullopt;
        bool empty = end == at;
        at = end + 2;
        if (empty) break;
    }
    buffer_.erase(0, at);
    return body;
}

std::optional<std::string> ResponseReader::read_body(const Response& head,
                                                     std::chrono::milliseconds timeout,
                                                     bool head_request) {
    auto deadline = Clock::now() + timeout;
    if (head_request || head.status < 200 || head.status == 204 || head.status == 304) {
        framing_ = "none";
        return std::string();
    }
    if (contains_ignoring_case(head.header("transfer-encoding"), "chunked")) {
        framing_ = "chunked";
        return read_chunked(deadline);
    }
    if (std::string length = head.header("content-length"); !length.empty()) {
        framing_ = "length";
        size_t size = std::stoull(length);
        while (buffer_.size() < size)
            if (!fill(deadline)) return std::nullopt;
        std::string body = buffer_.substr(0, size);
        buffer_.erase(0, size);
        return body;
    }
    framing_ = "close";
    while (fill(deadline)) {
    }
    if (!eof_) return std::nullopt;
    return std::exchange(buffer_, std::string());
}

std::optional<Response> ResponseReader::read(std::chrono::milliseconds timeout, bool head_request) {
    auto start = Clock::now();
    std::optional<Response> response = read_head(timeout);
    if (!response) return std::nullopt;
    auto left =
        timeout - std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
    std::optional<std::string> body = read_body(*response, left, head_request);
    if (!body) return std::nullopt;
    response->body = std::move(*body);
    return response;
}

bool ResponseReader::read_until(std::string_view text, std::chrono::milliseconds timeout) {
    auto deadline = Clock::now() + timeout;
    while (buffer_.find(text) == std::string::npos)
        if (!fill(deadline)) return false;
    return true;
}

bool ResponseReader::read_at_least(size_t count, std::chrono::milliseconds timeout) {
    auto deadline = Clock::now() + timeout;
    while (buffer_.size() < count)
        if (!fill(deadline)) return false;
    return true;
}

std::optional<std::string> ResponseReader::read_until_close(std::chrono::milliseconds timeout) {
    auto deadline = Clock::now() + timeout;
    while (!eof_)
        if (!fill(deadline) && !eof_) return std::nullopt;
    return std::exchange(buffer_, std::string());
}

std::optional<Response> proxy_fetch(uint16_t port, const std::string& request,
                                    std::chrono::milliseconds timeout) {
    Client client(port);
    client.send(request);
    ResponseReader reader(client.fd());
    return reader.read(timeout, request.rfind("HEAD ", 0) == 0);
}

std::optional<Response> fetch_encoded(uint16_t port, const std::string& target, const std::string& accept,
                                      const std::string& extra, const std::string& method) {
    std::string headers = accept.empty() ? extra : "Accept-Encoding: " + accept + "\r\n" + extra;
    return proxy_fetch(port, method + " " + target + " HTTP/1.1\r\nHost: front.example\r\n" + headers + "\r\n",
                       10s);
}

std::string with_metrics(const std::string& config, uint16_t metrics_port) {
    return config + "\n[metrics]\nlisten = \"127.0.0.1:" + std::to_string(metrics_port) + "\"\n";
}

double metric(uint16_t metrics_port, const std::string& series) {
    auto response = proxy_fetch(metrics_port, get_request("/metrics", "", "127.0.0.1"));
    if (!response || response->status != 200) return -1;
    std::istringstream lines(response->body);
    for (std::string line; std::getline(lines, line);)
        if (line.size() > series.size() && line.compare(0, series.size(), series) == 0 &&
            line[series.size()] == ' ')
            return std::strtod(line.c_str() + series.size() + 1, nullptr);
    return -1;
}

double upstream_errors(uint16_t metrics_port, const std::string& server_address,
                       const std::string& kind) {
    return metric(metrics_port, "portico_upstream_errors_total{upstream=\"app\",server=\"" +
                                    server_address + "\",kind=\"" + kind + "\"}");
}

FullListener::FullListener() {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address);
    // A backlog of 0 queues one connection; it is taken by ours, never accepted.
    ::listen(listen_fd_, 0);
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    queued_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ::connect(queued_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address);
}

FullListener::~FullListener() {
    ::close(queued_fd_);
    ::close(listen_fd_);
}

uint16_t unused_port() {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
    ::close(fd);
    return ntohs(address.sin_port);
}

long resident_kib(pid_t pid) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
    return 0;
}

long long ms_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

bool contains_ignoring_case(std::string_view haystack, std::string_view needle) {
    auto it = std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(),
                          [](char a, char b) {
                              return std::tolower(static_cast<unsigned char>(a)) ==
                                     std::tolower(static_cast<unsigned char>(b));
                          });
    return it != haystack.end();
}

}  // namespace portico::test
