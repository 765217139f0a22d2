#include "worker/admin_endpoint.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/log.hpp"
#include "http/status.hpp"

namespace portico::worker {

namespace {

constexpr size_t max_request_bytes = 8192;

// HEAD gets the head GET would get, Content-Length included.
std::string response_bytes(const metrics::AdminResponse& answer, bool head_only) {
    std::string response =
        "HTTP/1.1 " + std::to_string(answer.status) + " " +
        std::string(http::reason_phrase(answer.status)) +
        "\r\nServer: portico\r\nConnection: close\r\nCache-Control: no-store\r\n";
    response += answer.headers;
    if (answer.status != 204) {
        response += "Content-Type: " + answer.content_type + "\r\n";
        response += "Content-Length: " + std::to_string(answer.body.size()) + "\r\n";
    }
    response += "\r\n";
    if (answer.status != 204 && !head_only) response += answer.body;
    return response;
}

metrics::AdminResponse bad_request() {
    return {.status = 400, .content_type = "text/plain", .body = "400 Bad Request\n"};
}

// The request line of a whole head: the method and the target.
metrics::AdminResponse answer(std::string_view head, metrics::AdminContext& context,
                              bool& head_only) {
    size_t method_end = head.find(' ');
    if (method_end == std::string_view::npos) return bad_request();
    size_t target_end = head.find(' ', method_end + 1);
    if (target_end == std::string_view::npos) return bad_request();
    std::string_view method = head.substr(0, method_end);
    std::string_view target = head.substr(method_end + 1, target_end - method_end - 1);
    size_t question = target.find('?');
    head_only = method == "HEAD";
    return metrics::answer_admin_request(
        {.method = method,
         .path = target.substr(0, question),
         .query =
             question == std::string_view::npos ? std::string_view() : target.substr(question + 1)},
        context);
}

}  // namespace

bool AdminEndpoint::open(const config::SocketAddress& address, std::string& error) {
    core::UniqueFd fd(
        ::socket(address.storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    int on = 1;
    if (fd) ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (!fd ||
        ::bind(fd.get(), reinterpret_cast<const sockaddr*>(&address.storage), address.length) !=
            0 ||
        ::listen(fd.get(), 64) != 0) {
        error = "metrics listener " + address.text + ": " + std::strerror(errno);
        return false;
    }
    sockaddr_storage bound{};
    socklen_t length = sizeof bound;
    ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &length);
    uint16_t port =
        ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6&>(bound).sin6_port
                                          : reinterpret_cast<sockaddr_in&>(bound).sin_port);
    socket_ = std::move(fd);
    address_ = address.text;
    log::info("metrics on {} (port {})", address.text, port);
    return true;
}

void AdminEndpoint::add_poll_fds(std::vector<pollfd>& fds) const {
    // A full house leaves the listener unwatched: new clients wait in the
    // backlog until a connection ends, instead of waking poll for nothing.
    fds.push_back({connections_.size() < max_connections ? socket_.get() : -1, POLLIN, 0});
    for (const Connection& connection : connections_)
        fds.push_back({connection.fd.get(),
                       static_cast<short>(connection.output.empty() ? POLLIN : POLLOUT), 0});
}

void AdminEndpoint::on_poll(std::span<const pollfd> fds, metrics::AdminContext& context,
                            int64_t now_ms) {
    // Connections first: fds[1 + i] is connections_[i] as it was when polled.
    for (size_t i = 0; i + 1 < fds.size() && i < connections_.size(); ++i) {
        Connection& connection = connections_[i];
        short events = fds[i + 1].revents;
        if (events & (POLLERR | POLLHUP | POLLNVAL) && !(events & (POLLIN | POLLOUT)))
            connection.done = true;
        else if (events & POLLIN)
            read_request(connection, context, now_ms);
        else if (events & POLLOUT)
            write_response(connection, now_ms);
        if (!connection.done && now_ms >= connection.deadline_ms) connection.done = true;
    }
    std::erase_if(connections_, [](const Connection& connection) { return connection.done; });
    if (!fds.empty() && (fds[0].revents & POLLIN)) accept_pending(now_ms);
}

int64_t AdminEndpoint::next_deadline_ms(int64_t now_ms) const {
    int64_t next = -1;
    for (const Connection& connection : connections_) {
        int64_t left = std::max<int64_t>(connection.deadline_ms - now_ms, 0);
        if (next < 0 || left < next) next = left;
    }
    return next;
}

void AdminEndpoint::accept_pending(int64_t now_ms) {
    while (connections_.size() < max_connections) {
        int client = ::accept4(socket_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (client < 0) return;
        Connection connection;
        connection.fd.reset(client);
        connection.deadline_ms = now_ms + client_timeout_ms;
        connections_.push_back(std::move(connection));
    }
}

// The head must arrive whole within client_timeout_ms of the accept: a
// client dripping a byte at a time gains nothing by it.
void AdminEndpoint::read_request(Connection& connection, metrics::AdminContext& context,
                                 int64_t now_ms) {
    char chunk[2048];
    ssize_t n = ::recv(connection.fd.get(), chunk, sizeof chunk, 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (n <= 0) {
        connection.done = true;
        return;
    }
    connection.input.append(chunk, static_cast<size_t>(n));
    if (connection.input.find("\r\n\r\n") == std::string::npos) {
        if (connection.input.size() > max_request_bytes) connection.done = true;
        return;
    }
    bool head_only = false;
    connection.output = response_bytes(answer(connection.input, context, head_only), head_only);
    connection.input.clear();
    write_response(connection, now_ms);
}

// A response makes progress within client_timeout_ms, or its client is dropped.
void AdminEndpoint::write_response(Connection& connection, int64_t now_ms) {
    while (connection.sent < connection.output.size()) {
        ssize_t n = ::send(connection.fd.get(), connection.output.data() + connection.sent,
                           connection.output.size() - connection.sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return;
        if (n <= 0) break;
        connection.sent += static_cast<size_t>(n);
        connection.deadline_ms = now_ms + client_timeout_ms;
    }
    connection.done = true;  // Connection: close
}

}  // namespace portico::worker
