#include "http/response_head.hpp"

#include <charconv>
#include <cstring>

#include "http/status.hpp"

namespace portico::http {

void ResponseHead::put(std::string_view text) {
    if (static_cast<size_t>(end_ - cursor_) < text.size()) {
        overflowed_ = true;
        return;
    }
    std::memcpy(cursor_, text.data(), text.size());
    cursor_ += text.size();
}

void ResponseHead::status_line(int status) {
    char code[4] = {static_cast<char>('0' + status / 100 % 10),
                    static_cast<char>('0' + status / 10 % 10),
                    static_cast<char>('0' + status % 10), ' '};
    put("HTTP/1.1 ");
    put({code, 4});
    put(reason_phrase(status));
    put("\r\n");
}

void ResponseHead::header(std::string_view name, std::string_view value) {
    put(name);
    put(": ");
    put(value);
    put("\r\n");
}

void ResponseHead::header(std::string_view name, uint64_t value) {
    char digits[20];
    auto [end, error] = std::to_chars(digits, digits + sizeof digits, value);
    (void)error;  // 20 digits hold any uint64_t
    header(name, std::string_view(digits, static_cast<size_t>(end - digits)));
}

void ResponseHead::end() { put("\r\n"); }

void ResponseHead::append(std::string_view bytes) { put(bytes); }

}  // namespace portico::http
