#include "http/proxy_protocol.hpp"

#include <arpa/inet.h>

#include <cstdint>
#include <cstring>

namespace portico::http {

namespace {

using Status = ProxyHeader::Status;

constexpr std::string_view v1_prefix = "PROXY ";
constexpr std::string_view v2_signature{"\r\n\r\n\0\r\nQUIT\n", 12};

ProxyHeader invalid_header(std::string_view problem) {
    ProxyHeader header;
    header.status = Status::invalid;
    header.problem = problem;
    return header;
}

// The next space-separated field of a v1 line (exactly one space between).
std::string_view take_field(std::string_view& line) {
    size_t space = line.find(' ');
    std::string_view field = line.substr(0, space);
    line = space == std::string_view::npos ? std::string_view{} : line.substr(space + 1);
    return field;
}

bool parse_port(std::string_view text, uint16_t& port) {
    if (text.empty() || text.size() > 5 || (text.size() > 1 && text[0] == '0')) return false;
    unsigned value = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return false;
        value = value * 10 + static_cast<unsigned>(c - '0');
    }
    if (value > 65535) return false;
    port = static_cast<uint16_t>(value);
    return true;
}

bool parse_ip(std::string_view text, int family, void* out) {
    char buffer[INET6_ADDRSTRLEN];
    if (text.empty() || text.size() >= sizeof buffer) return false;
    std::memcpy(buffer, text.data(), text.size());
    buffer[text.size()] = '\0';
    return inet_pton(family, buffer, out) == 1;
}

// "PROXY TCP4 192.0.2.1 192.0.2.2 56324 443\r\n", "PROXY UNKNOWN ...\r\n".
ProxyHeader parse_v1(std::string_view bytes) {
    size_t end = bytes.find("\r\n");
    if (end == std::string_view::npos) {
        if (bytes.size() >= proxy_v1_max_length)
            return invalid_header("a v1 line longer than 107 bytes");
        // A lone CR must be the start of the CRLF, the last byte in hand.
        size_t cr = bytes.find('\r');
        if (cr != std::string_view::npos && cr + 1 != bytes.size())
            return invalid_header("a v1 line with a CR that is not followed by LF");
        return {};
    }
    if (end + 2 > proxy_v1_max_length) return invalid_header("a v1 line longer than 107 bytes");
    ProxyHeader header;
    header.status = Status::complete;
    header.length = end + 2;
    std::string_view line = bytes.substr(v1_prefix.size(), end - v1_prefix.size());
    std::string_view protocol = take_field(line);
    if (protocol == "UNKNOWN") return header;  // the rest of the line is ignored
    int family = protocol == "TCP4" ? AF_INET : protocol == "TCP6" ? AF_INET6 : AF_UNSPEC;
    if (family == AF_UNSPEC)
        return invalid_header("a v1 protocol other than TCP4, TCP6 or UNKNOWN");
    std::string_view source = take_field(line);
    std::string_view destination = take_field(line);
    std::string_view source_port = take_field(line);
    std::string_view destination_port = take_field(line);
    uint16_t port = 0;
    uint16_t ignored_port = 0;
    in6_addr ignored_address;
    PeerAddress& address = header.source;
    bool good = family == AF_INET ? parse_ip(source, AF_INET, &address.v4.sin_addr)
                                  : parse_ip(source, AF_INET6, &address.v6.sin6_addr);
    good = good && parse_ip(destination, family, &ignored_address) &&
           parse_port(source_port, port) && parse_port(destination_port, ignored_port) &&
           line.empty() && !destination_port.empty();
    if (!good) return invalid_header("a v1 line whose addresses or ports do not parse");
    if (family == AF_INET) {
        address.v4.sin_family = AF_INET;
        address.v4.sin_port = htons(port);
    } else {
        address.v6.sin6_family = AF_INET6;
        address.v6.sin6_port = htons(port);
    }
    header.has_source = true;
    return header;
}

ProxyHeader parse_v2(std::string_view bytes, size_t max_length) {
    if (bytes.size() < proxy_v2_fixed_length) return {};
    auto byte = [&](size_t i) { return static_cast<uint8_t>(bytes[i]); };
    uint8_t version = byte(12) >> 4;
    uint8_t command = byte(12) & 0x0f;
    if (version != 2) return invalid_header("a v2 header with another version");
    if (command > 1) return invalid_header("a v2 command other than LOCAL or PROXY");
    size_t address_length = static_cast<size_t>(byte(14)) << 8 | byte(15);
    size_t length = proxy_v2_fixed_length + address_length;
    if (length > max_length) return invalid_header("a v2 header longer than the buffer");
    uint8_t family = byte(13);
    // Families: AF_UNSPEC, AF_INET, AF_INET6, AF_UNIX; protocols UNSPEC,
    // STREAM, DGRAM. Anything else "must be rejected as invalid".
    if ((family >> 4) > 3 || (family & 0x0f) > 2)
        return invalid_header("a v2 family that does not exist");
    if (bytes.size() < length) return {};
    ProxyHeader header;
    header.status = Status::complete;
    header.length = length;
    bool local = command == 0;
    const char* addresses = bytes.data() + proxy_v2_fixed_length;
    PeerAddress& address = header.source;
    if (!local && family == 0x11) {  // TCP over IPv4: source, destination, their ports
        if (address_length < 12)
            return invalid_header("a v2 TCP4 header too short for its addresses");
        address.v4.sin_family = AF_INET;
        std::memcpy(&address.v4.sin_addr, addresses, 4);
        std::memcpy(&address.v4.sin_port, addresses + 8, 2);
        header.has_source = true;
    } else if (!local && family == 0x21) {  // TCP over IPv6
        if (address_length < 36)
            return invalid_header("a v2 TCP6 header too short for its addresses");
        address.v6.sin6_family = AF_INET6;
        std::memcpy(&address.v6.sin6_addr, addresses, 16);
        std::memcpy(&address.v6.sin6_port, addresses + 32, 2);
        header.has_source = true;
    }
    // LOCAL, UNSPEC, UDP and Unix sockets: the connection's own peer stays.
    return header;
}

}  // namespace

ProxyHeader parse_proxy_header(std::string_view bytes, size_t max_length) {
    if (bytes.empty()) return {};
    std::string_view signature = bytes[0] == 'P' ? v1_prefix : v2_signature;
    size_t compared = std::min(bytes.size(), signature.size());
    if (bytes.substr(0, compared) != signature.substr(0, compared))
        return invalid_header("no PROXY protocol signature");
    if (bytes.size() < signature.size()) return {};
    return bytes[0] == 'P' ? parse_v1(bytes) : parse_v2(bytes, max_length);
}

}  // namespace portico::http
