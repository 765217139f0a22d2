#include "http/request.hpp"

#include <llhttp.h>

#include <array>

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

// A reg-name's characters (RFC 3986 3.2.2: unreserved, sub-delims, and '%'
// of a pct-encoding), as a table: every request's Host goes through it, one
// lookup a character.
constexpr std::array<bool, 256> reg_name_chars = [] {
    std::array<bool, 256> table{};
    for (char c = 'a'; c <= 'z'; ++c) table[static_cast<unsigned char>(c)] = true;
    for (char c = 'A'; c <= 'Z'; ++c) table[static_cast<unsigned char>(c)] = true;
    for (char c = '0'; c <= '9'; ++c) table[static_cast<unsigned char>(c)] = true;
    for (char c : std::string_view("-._~!$&'()*+,;=%")) table[static_cast<unsigned char>(c)] = true;
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
    char previous = '\0';
    for (; i < host.size() && host[i] != ':'; ++i) {
        char c = host[i];
        if (!reg_name_chars[static_cast<unsigned char>(c)]) return false;
        if (c == '.' && previous == '.') return false;  // nginx refuses "..", as a path would climb
        if (c == '%') {
            if (i + 2 >= host.size() || !is_hex_digit(host[i + 1]) || !is_hex_digit(host[i + 2]))
                return false;
            i += 2;
        }
        previous = c;
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
