// A client's address: IPv4 or IPv6, in 28 bytes rather than a 128-byte
// sockaddr_storage, since every open connection keeps one.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace portico::http {

union PeerAddress {
    sockaddr any;
    sockaddr_in v4;
    sockaddr_in6 v6;
};

// The address as text ("127.0.0.1", "::1") in `buffer` (INET6_ADDRSTRLEN
// bytes). IPv4 by hand: glibc's inet_ntop goes through sprintf, a few
// thousand instructions on every proxied or logged request.
std::string_view format_ip(const PeerAddress& address, char* buffer, size_t size);

// "127.0.0.1:3000", "[::1]:3000": for logs, not for the request path.
std::string format_ip_and_port(const PeerAddress& address);

// sockaddr bytes to connect() with.
socklen_t address_length(const PeerAddress& address);

// A total order (family, then bytes), for sorted sets of addresses.
int compare_addresses(const PeerAddress& a, const PeerAddress& b);

}  // namespace portico::http
