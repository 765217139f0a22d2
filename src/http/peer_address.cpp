#include "http/peer_address.hpp"

#include <arpa/inet.h>

#include <cstring>

namespace portico::http {

std::string_view format_ip(const PeerAddress& address, char* buffer, size_t size) {
    if (address.any.sa_family == AF_INET) {
        const auto* bytes = reinterpret_cast<const unsigned char*>(&address.v4.sin_addr);
        char* out = buffer;
        for (int i = 0; i < 4; ++i) {
            unsigned value = bytes[i];
            if (value >= 100) *out++ = static_cast<char>('0' + value / 100);
            if (value >= 10) *out++ = static_cast<char>('0' + value / 10 % 10);
            *out++ = static_cast<char>('0' + value % 10);
            if (i < 3) *out++ = '.';
        }
        return {buffer, static_cast<size_t>(out - buffer)};
    }
    if (address.any.sa_family == AF_INET6 &&
        inet_ntop(AF_INET6, &address.v6.sin6_addr, buffer, static_cast<socklen_t>(size)) != nullptr)
        return buffer;
    return "-";
}

std::string format_ip_and_port(const PeerAddress& address) {
    char ip[INET6_ADDRSTRLEN];
    std::string text(format_ip(address, ip, sizeof ip));
    uint16_t port =
        ntohs(address.any.sa_family == AF_INET6 ? address.v6.sin6_port : address.v4.sin_port);
    if (address.any.sa_family == AF_INET6) text = "[" + text + "]";
    return text + ":" + std::to_string(port);
}

socklen_t address_length(const PeerAddress& address) {
    return address.any.sa_family == AF_INET6 ? sizeof address.v6 : sizeof address.v4;
}

int compare_addresses(const PeerAddress& a, const PeerAddress& b) {
    if (a.any.sa_family != b.any.sa_family) return a.any.sa_family < b.any.sa_family ? -1 : 1;
    return std::memcmp(&a, &b, address_length(a));
}

}  // namespace portico::http
