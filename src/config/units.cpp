#include "config/units.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/un.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstddef>
#include <cstring>
#include <limits>
#include <span>
#include <string>

namespace portico::config {

namespace {

struct Unit {
    std::string_view suffix;
    uint64_t factor;
};

// The whole of `digits` as an unsigned number: no sign, no spaces, no
// fraction (from_chars stops at them and we refuse the leftover).
std::optional<uint64_t> parse_unsigned(std::string_view digits) {
    uint64_t value = 0;
    const char* end = digits.data() + digits.size();
    auto [stop, ec] = std::from_chars(digits.data(), end, value);
    if (digits.empty() || ec != std::errc{} || stop != end) {
        return std::nullopt;
    }
    return value;
}

// Splits "16KiB" into 16 and "KiB", then scales by the unit's factor; the
// product must not exceed `limit`.
std::optional<uint64_t> parse_scaled(std::string_view text, std::span<const Unit> units,
                                     uint64_t limit) {
    size_t digits_end = 0;
    while (digits_end < text.size() && text[digits_end] >= '0' && text[digits_end] <= '9') {
        ++digits_end;
    }
    auto number = parse_unsigned(text.substr(0, digits_end));
    if (!number) {
        return std::nullopt;
    }
    std::string_view suffix = text.substr(digits_end);
    for (const Unit& unit : units) {
        if (unit.suffix == suffix) {
            if (*number > limit / unit.factor) {
                return std::nullopt;
            }
            return *number * unit.factor;
        }
    }
    return std::nullopt;
}

std::optional<uint16_t> parse_port(std::string_view text) {
    auto port = parse_unsigned(text);
    if (!port || *port > 65535) {
        return std::nullopt;
    }
    return static_cast<uint16_t>(*port);
}

SocketAddress make_address(const void* sockaddr_bytes, socklen_t length, std::string_view text) {
    SocketAddress address;
    std::memcpy(&address.storage, sockaddr_bytes, length);
    address.length = length;
    address.text = std::string(text);
    return address;
}

std::optional<SocketAddress> ipv4_literal(const std::string& host, uint16_t port,
                                          std::string_view text) {
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_port = htons(port);
    // inet_pton, not inet_aton: "127.1" or "0x7f.0.0.1" are not addresses an
    // operator means to write.
    if (inet_pton(AF_INET, host.c_str(), &sin.sin_addr) != 1) {
        return std::nullopt;
    }
    return make_address(&sin, sizeof sin, text);
}

std::optional<SocketAddress> ipv6_literal(const std::string& host, uint16_t port,
                                          std::string_view text) {
    sockaddr_in6 sin6{};
    sin6.sin6_family = AF_INET6;
    sin6.sin6_port = htons(port);
    if (inet_pton(AF_INET6, host.c_str(), &sin6.sin6_addr) != 1) {
        return std::nullopt;
    }
    return make_address(&sin6, sizeof sin6, text);
}

std::optional<SocketAddress> resolve_hostname(const std::string& host, uint16_t port,
                                              std::string_view text, std::string& why) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo* found = nullptr;
    std::string service = std::to_string(port);
    int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
    if (rc != 0) {
        why = "cannot resolve host '" + host + "': " + gai_strerror(rc);
        return std::nullopt;
    }
    SocketAddress address = make_address(found->ai_addr, found->ai_addrlen, text);
    freeaddrinfo(found);
    address.host = host;
    address.port = port;
    return address;
}

// What a DNS name may hold (RFC 1123 labels), plus '_': Docker Compose
// service names may have one, and Docker's DNS answers them. The rest
// (spaces, a scheme, a path) is a typo better reported by `portico -t` than
// by every worker's lookups.
bool is_host_name(std::string_view host) {
    if (host.empty() || host.size() > 253 || host.front() == '.' || host.front() == '-') {
        return false;
    }
    return std::all_of(host.begin(), host.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
    });
}

SocketAddress host_name_address(const std::string& host, uint16_t port, std::string_view text) {
    SocketAddress address;
    address.text = std::string(text);
    address.host = host;
    address.port = port;
    return address;
}

}  // namespace

std::optional<Duration> parse_duration(std::string_view text) {
    static constexpr std::array<Unit, 4> units{{
        {"ms", 1},
        {"s", 1000},
        {"m", 60 * 1000},
        {"h", 60 * 60 * 1000},
    }};
    auto limit = static_cast<uint64_t>(std::numeric_limits<Duration::rep>::max());
    auto ms = parse_scaled(text, units, limit);
    if (!ms) {
        return std::nullopt;
    }
    return Duration(static_cast<Duration::rep>(*ms));
}

std::optional<uint64_t> parse_size(std::string_view text) {
    static constexpr uint64_t KiB = 1024;
    static constexpr std::array<Unit, 14> units{{
        {"", 1},
        {"B", 1},
        {"k", KiB},
        {"K", KiB},
        {"KB", KiB},
        {"KiB", KiB},
        {"m", KiB * KiB},
        {"M", KiB * KiB},
        {"MB", KiB * KiB},
        {"MiB", KiB * KiB},
        {"g", KiB * KiB * KiB},
        {"G", KiB * KiB * KiB},
        {"GB", KiB * KiB * KiB},
        {"GiB", KiB * KiB * KiB},
    }};
    return parse_scaled(text, units, std::numeric_limits<uint64_t>::max());
}

std::optional<SocketAddress> parse_socket_address(std::string_view text, HostNames host_names,
                                                  std::string& why) {
    // `proxy = "http://..."` invites `servers = ["http://..."]`: say so,
    // rather than that the colons make it look like IPv6 without brackets.
    if (size_t scheme_end = text.find("://"); scheme_end != std::string_view::npos) {
        why = "expected \"host:port\", not a URL: without \"" +
              std::string(text.substr(0, scheme_end + 3)) + "\"";
        return std::nullopt;
    }
    std::string host;
    std::string_view port_text;
    bool bracketed = text.starts_with('[');
    if (bracketed) {
        size_t close = text.find("]:");
        if (close == std::string_view::npos) {
            why = "expected \"[IPv6]:port\", like \"[::1]:8080\"";
            return std::nullopt;
        }
        host = std::string(text.substr(1, close - 1));
        port_text = text.substr(close + 2);
    } else {
        size_t colon = text.rfind(':');
        if (colon == std::string_view::npos || colon == 0) {
            why = "expected \"host:port\", like \"127.0.0.1:8080\"";
            return std::nullopt;
        }
        host = std::string(text.substr(0, colon));
        port_text = text.substr(colon + 1);
        if (host.find(':') != std::string::npos) {
            why = "an IPv6 address needs brackets, like \"[::1]:8080\"";
            return std::nullopt;
        }
    }
    auto port = parse_port(port_text);
    if (!port) {
        why = "port '" + std::string(port_text) + "' is not a number 0..65535";
        return std::nullopt;
    }
    if (bracketed) {
        auto address = ipv6_literal(host, *port, text);
        if (!address) {
            why = "'" + host + "' is not an IPv6 address";
        }
        return address;
    }
    if (auto address = ipv4_literal(host, *port, text)) {
        return address;
    }
    switch (host_names) {
    case HostNames::refused:
        why = "'" + host + "' is not an IP address (only upstream servers may use host names)";
        return std::nullopt;
    case HostNames::resolve_now:
        return resolve_hostname(host, *port, text, why);
    case HostNames::resolve_later:
        if (!is_host_name(host)) {
            why = "'" + host + "' is not a host name (letters, digits, '-', '_' and '.')";
            return std::nullopt;
        }
        return host_name_address(host, *port, text);
    }
    return std::nullopt;
}

std::optional<SocketAddress> unix_socket_address(std::string_view path, std::string& why) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    // sun_path holds the path and its terminating NUL (108 bytes on Linux):
    // a longer one would be cut, and connect to another socket or none.
    if (path.empty() || path.size() >= sizeof address.sun_path) {
        why = "a Unix socket path has 1 to " + std::to_string(sizeof address.sun_path - 1) +
              " bytes, this one " + std::to_string(path.size());
        return std::nullopt;
    }
    std::memcpy(address.sun_path, path.data(), path.size());
    auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size() + 1);
    return make_address(&address, length, "unix:" + std::string(path));
}

std::optional<SocketAddress> parse_socket_address(std::string_view text, HostNames host_names) {
    std::string ignored;
    return parse_socket_address(text, host_names, ignored);
}

}  // namespace portico::config
