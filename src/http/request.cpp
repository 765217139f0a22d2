#include "http/request.hpp"

#include <llhttp.h>

#include <array>
#include <cstdint>

namespace portico::http {

bool Request::is_head() const { return method == HTTP_HEAD; }

std::string_view Request::header(std::string_view name) const {
    for (const HeaderField& field : headers)
        if (equals_ignore_case(field.name, name)) return field.value;
    return {};
}

namespace {

bool is_hex_digit(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// What each byte may be in a Host (RFC 3986 3.2.2): a reg-name character
// (unreserved, sub-delims), a '.', the '%' of a pct-encoding, the ':' before
// the port, or nothing valid. One table lookup a byte: every request's Host
// goes through it.
enum HostByte : uint8_t { invalid, name_byte, dot, percent, colon };

constexpr std::array<uint8_t, 256> host_bytes = [] {
    std::array<uint8_t, 256> table{};
    for (char c = 'a'; c <= 'z'; ++c) table[static_cast<unsigned char>(c)] = name_byte;
    for (char c = 'A'; c <= 'Z'; ++c) table[static_cast<unsigned char>(c)] = name_byte;
    for (char c = '0'; c <= '9'; ++c) table[static_cast<unsigned char>(c)] = name_byte;
    for (char c : std::string_view("-_~!$&'()*+,;="))
        table[static_cast<unsigned char>(c)] = name_byte;
    table['.'] = dot;
    table['%'] = percent;
    table[':'] = colon;
    return table;
}();

// ":" and at most five digits, or nothing.
bool is_valid_port_part(std::string_view rest) {
    if (rest.empty()) return true;
    if (rest.front() != ':' || rest.size() > 6) return false;
    for (char c : rest.substr(1))
        if (c < '0' || c > '9') return false;
    return true;
}

}  // namespace

bool is_valid_host(std::string_view host) {
    if (host.empty()) return true;
    if (host.front() == '[') {  // an IPv6 (or IPvFuture) literal
        size_t close = host.find(']');
        if (close == std::string_view::npos || close < 2) return false;
        for (char c : host.substr(1, close - 1))
            if (!is_hex_digit(c) && c != ':' && c != '.') return false;
        return is_valid_port_part(host.substr(close + 1));
    }
    size_t i = 0;
    for (; i < host.size(); ++i) {
        uint8_t kind = host_bytes[static_cast<unsigned char>(host[i])];
        if (kind == name_byte) [[likely]]
            continue;
        if (kind == dot) {
            // nginx refuses "..", as a path would climb.
            if (i > 0 && host[i - 1] == '.') return false;
        } else if (kind == percent) {
            if (i + 2 >= host.size() || !is_hex_digit(host[i + 1]) || !is_hex_digit(host[i + 2]))
                return false;
            i += 2;
        } else {
            break;  // the port's ':', or a byte no host has
        }
    }
    return i > 0 && is_valid_port_part(host.substr(i));
}

void Request::reset() {
    std::string keep_path = std::move(normalized_path);
    std::vector<HeaderField> keep_headers = std::move(headers);
    *this = Request{};
    keep_path.clear();
    keep_headers.clear();
    normalized_path = std::move(keep_path);
    headers = std::move(keep_headers);
}

}  // namespace portico::http
