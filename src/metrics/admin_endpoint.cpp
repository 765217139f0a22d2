#include "metrics/admin_endpoint.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

#include "http/status.hpp"

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

// HEAD gets the head GET would get, Content-Length included.
void respond(int fd, const AdminResponse& answer, bool head_only) {
    std::string response = "HTTP/1.1 " + std::to_string(answer.status) + " " +
                           std::string(http::reason_phrase(answer.status)) +
                           "\r\nServer: portico\r\nConnection: close\r\nCache-Control: no-store\r\n";
    response += answer.headers;
    if (answer.status != 204) {
        response += "Content-Type: " + answer.content_type + "\r\n";
        response += "Content-Length: " + std::to_string(answer.body.size()) + "\r\n";
    }
    response += "\r\n";
    if (answer.status != 204 && !head_only) response += answer.body;
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

void AdminEndpoint::serve_pending(AdminContext& context) {
    for (int i = 0; i < 16; ++i) {
        int client = ::accept4(socket_.get(), nullptr, nullptr, SOCK_CLOEXEC);
        if (client < 0) return;
        set_timeouts(client);
        serve_one(client, context);
        ::close(client);
    }
}

void AdminEndpoint::serve_one(int client, AdminContext& context) {
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
        respond(client, {.status = 400, .content_type = "text/plain", .body = "400 Bad Request\n"},
                false);
        return;
    }
    std::string_view line(request);
    std::string_view method = line.substr(0, method_end);
    std::string_view target = line.substr(method_end + 1, target_end - method_end - 1);
    size_t question = target.find('?');
    AdminRequest parsed{.method = method,
                        .path = target.substr(0, question),
                        .query = question == std::string_view::npos ? std::string_view()
                                                                    : target.substr(question + 1)};
    respond(client, answer_admin_request(parsed, context), method == "HEAD");
}

}  // namespace portico::metrics
