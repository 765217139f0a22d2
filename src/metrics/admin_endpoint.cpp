#include "metrics/admin_endpoint.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

#include "http/status.hpp"
#include "metrics/render.hpp"

namespace portico::metrics {

namespace {

constexpr size_t max_request_bytes = 8192;

void set_timeouts(int fd) {
    timeval timeout{1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
}

void write_all(int fd, const std::string& bytes) {
    size_t sent = 0;
    while (sent < bytes.size()) {
        ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) return;  // gone or stuck past the timeout: drop it
        sent += static_cast<size_t>(n);
    }
}

void respond(int fd, int status, std::string_view content_type, const std::string& body) {
    std::string response = "HTTP/1.1 " + std::to_string(status) + " " +
                           std::string(http::reason_phrase(status)) +
                           "\r\nServer: portico\r\nConnection: close\r\nCache-Control: no-store\r\n";
    if (status != 204) {
        response += "Content-Type: " + std::string(content_type) + "\r\n";
        response += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    }
    response += "\r\n";
    if (status != 204) response += body;
    write_all(fd, response);
}

}  // namespace

bool AdminEndpoint::open(const config::SocketAddress& address, std::string& error) {
    core::UniqueFd fd(::socket(address.storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    int on = 1;
    if (fd) ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (!fd || ::bind(fd.get(), reinterpret_cast<const sockaddr*>(&address.storage), address.length) != 0 ||
        ::listen(fd.get(), 64) != 0) {
        error = "metrics listener " + address.text + ": " + std::strerror(errno);
        return false;
    }
    sockaddr_storage bound{};
    socklen_t length = sizeof bound;
    ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &length);
    uint16_t port = ntohs(bound.ss_family == AF_INET6
                              ? reinterpret_cast<sockaddr_in6&>(bound).sin6_port
                              : reinterpret_cast<sockaddr_in&>(bound).sin_port);
    socket_ = std::move(fd);
    address_ = address.text;
    spdlog::info("metrics on {} (port {})", address.text, port);
    return true;
}

void AdminEndpoint::serve_pending(SharedCounters& counters, const std::function<bool()>& healthy) {
    for (int i = 0; i < 16; ++i) {
        int client = ::accept4(socket_.get(), nullptr, nullptr, SOCK_CLOEXEC);
        if (client < 0) return;
        set_timeouts(client);
        serve_one(client, counters, healthy);
        ::close(client);
    }
}

void AdminEndpoint::serve_one(int client, SharedCounters& counters,
                              const std::function<bool()>& healthy) {
    std::string request;
    char chunk[2048];
    while (request.find("\r\n\r\n") == std::string::npos) {
        ssize_t n = ::recv(client, chunk, sizeof chunk, 0);
        if (n <= 0 || request.size() > max_request_bytes) return;
        request.append(chunk, static_cast<size_t>(n));
    }
    size_t method_end = request.find(' ');
    size_t target_end = request.find(' ', method_end + 1);
    if (method_end == std::string::npos || target_end == std::string::npos) {
        respond(client, 400, "text/plain", "400 Bad Request\n");
        return;
    }
    std::string method = request.substr(0, method_end);
    std::string path = request.substr(method_end + 1, target_end - method_end - 1);
    path = path.substr(0, path.find('?'));
    bool get = method == "GET" || method == "HEAD";
    if (path == "/metrics" && get) {
        respond(client, 200, "text/plain; version=0.0.4; charset=utf-8",
                render_prometheus(counters.snapshot()));
    } else if (path == "/stats" && get) {
        respond(client, 200, "application/json", render_json(counters.snapshot()));
    } else if (path == "/stats/reset" && method == "POST") {
        counters.reset();
        spdlog::info("counters reset through {}", address_);
        respond(client, 204, "", "");
    } else if (path == "/healthz" && get) {
        bool ok = healthy();
        respond(client, ok ? 200 : 503, "text/plain", ok ? "ok\n" : "no worker is accepting\n");
    } else if (path == "/metrics" || path == "/stats" || path == "/stats/reset" || path == "/healthz") {
        respond(client, 405, "text/plain", "405 Method Not Allowed\n");
    } else {
        respond(client, 404, "text/plain", "404 Not Found: try /metrics, /stats, /stats/reset, /healthz\n");
    }
}

}  // namespace portico::metrics
