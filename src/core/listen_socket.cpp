#include "core/listen_socket.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace portico::core {

namespace {

void set_port(sockaddr_storage& storage, uint16_t port) {
    if (storage.ss_family == AF_INET6)
        reinterpret_cast<sockaddr_in6&>(storage).sin6_port = htons(port);
    else
        reinterpret_cast<sockaddr_in&>(storage).sin_port = htons(port);
}

uint16_t get_port(const sockaddr_storage& storage) {
    if (storage.ss_family == AF_INET6)
        return ntohs(reinterpret_cast<const sockaddr_in6&>(storage).sin6_port);
    return ntohs(reinterpret_cast<const sockaddr_in&>(storage).sin_port);
}

}  // namespace

UniqueFd open_listen_socket(const config::SocketAddress& address, uint16_t* port,
                            std::string& error) {
    sockaddr_storage storage = address.storage;
    if (get_port(storage) == 0 && *port != 0) set_port(storage, *port);

    UniqueFd fd(::socket(storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd) {
        error = std::string("socket(): ") + std::strerror(errno);
        return {};
    }
    int on = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEPORT, &on, sizeof on) != 0) {
        error = std::string("setsockopt(SO_REUSEPORT): ") + std::strerror(errno);
        return {};
    }
    if (storage.ss_family == AF_INET6)
        ::setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on);
    // Accept only once the request's first bytes are there: one wake-up
    // less per new connection (nginx's deferred accept).
    int defer_seconds = 1;
    ::setsockopt(fd.get(), IPPROTO_TCP, TCP_DEFER_ACCEPT, &defer_seconds, sizeof defer_seconds);

    if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&storage), address.length) != 0) {
        error = "bind(" + address.text + "): " + std::strerror(errno) +
                (errno == EADDRINUSE ? " (another server holds this port; stop it or change "
                                       "[server] listen)"
                                     : "");
        return {};
    }
    if (::listen(fd.get(), 4096) != 0) {
        error = "listen(" + address.text + "): " + std::strerror(errno);
        return {};
    }
    sockaddr_storage bound{};
    socklen_t bound_length = sizeof bound;
    ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &bound_length);
    *port = get_port(bound);
    return fd;
}

}  // namespace portico::core
