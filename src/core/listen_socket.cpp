#include "core/listen_socket.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

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

// The TCP states of /proc/net/tcp's "st" column, in kernel order.
constexpr const char* tcp_state_names[] = {"",           "ESTABLISHED", "SYN_SENT",  "SYN_RECV",
                                           "FIN_WAIT1",  "FIN_WAIT2",   "TIME_WAIT", "CLOSE",
                                           "CLOSE_WAIT", "LAST_ACK",    "LISTEN",    "CLOSING"};

}  // namespace

std::string describe_port_holders(uint16_t port) {
    size_t counts[std::size(tcp_state_names)] = {};
    for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
        std::ifstream in(table);
        std::string line;
        std::getline(in, line);  // the column names
        while (std::getline(in, line)) {
            std::istringstream fields(line);
            std::string slot, local, remote;
            unsigned state = 0;
            fields >> slot >> local >> remote >> std::hex >> state;
            size_t colon = local.rfind(':');
            if (!fields || colon == std::string::npos) continue;
            if (std::strtoul(local.c_str() + colon + 1, nullptr, 16) != port) continue;
            if (state < std::size(counts)) ++counts[state];
        }
    }
    constexpr unsigned listen_state = 10;
    if (counts[listen_state] > 0)
        return "another server listens on this port; stop it or change [server] listen";
    std::string held;
    for (size_t state = 1; state < std::size(counts); ++state) {
        if (counts[state] == 0) continue;
        if (!held.empty()) held += ", ";
        held += std::to_string(counts[state]) + " " + tcp_state_names[state];
    }
    if (held.empty())
        return "the port is in use (in another network namespace, or bound without listening); "
               "change [server] listen";
    return "no server listens on it, but connections still use it as their local port (" + held +
           "); wait for them to close (TIME_WAIT lasts 60 s) or change [server] listen";
}

UniqueFd open_listen_socket(const sockaddr_storage& address, socklen_t length,
                            const std::string& text, uint16_t* port, std::string& error) {
    sockaddr_storage storage = address;
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

    if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&storage), length) != 0) {
        int bind_error = errno;
        error = "bind(" + text + "): " + std::strerror(bind_error);
        if (bind_error == EADDRINUSE)
            error += " (" + describe_port_holders(get_port(storage)) + ")";
        return {};
    }
    if (::listen(fd.get(), 4096) != 0) {
        error = "listen(" + text + "): " + std::strerror(errno);
        return {};
    }
    sockaddr_storage bound{};
    socklen_t bound_length = sizeof bound;
    ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &bound_length);
    *port = get_port(bound);
    return fd;
}

}  // namespace portico::core
