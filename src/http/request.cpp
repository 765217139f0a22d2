#include "http/request.hpp"

#include <llhttp.h>

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

// unreserved / sub-delims (RFC 3986 2.2, 2.3); '%' is checked apart.
bool is_reg_name_char(char c) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
    switch (c) {
    case '-':
    case '.':
    case '_':
    case '~':
    case '!':
    case '$':
    case '&':
    case '\'':
    case '(':
    case ')':
    case '*':
    case '+':
    case ',':
    case ';':
    case '=':
        return true;
    default:
        return false;
    }
}

bool is_valid_port(std::string_view port) {
    if (port.size() > 5) return false;
    for (char c : port)
        if (c < '0' || c > '9') return false;
    return true;
}

}  // namespace

bool is_valid_host(std::string_view host) {
    if (host.empty()) return true;
    std::string_view name;
    std::string_view rest;
    if (host.front() == '[') {
        size_t close = host.find(']');
        if (close == std::string_view::npos || close < 2) return false;
        for (char c : host.substr(1, close - 1))
            if (!is_hex_digit(c) && c != ':' && c != '.') return false;
        rest = host.substr(close + 1);
    } else {
        size_t colon = host.find(':');
        name = host.substr(0, colon);
        rest = colon == std::string_view::npos ? std::string_view() : host.substr(colon);
        if (name.empty() || name.find("..") != std::string_view::npos) return false;
        for (size_t i = 0; i < name.size(); ++i) {
            if (is_reg_name_char(name[i])) continue;
            if (name[i] != '%' || i + 2 >= name.size() || !is_hex_digit(name[i + 1]) ||
                !is_hex_digit(name[i + 2]))
                return false;
            i += 2;
        }
    }
    if (rest.empty()) return true;
    return rest.front() == ':' && is_valid_port(rest.substr(1));
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
