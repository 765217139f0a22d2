// Builds a response head with memcpy into a caller's fixed buffer: no
// allocation, no formatting library on the hot path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace portico::http {

class ResponseHead {
public:
    ResponseHead(char* buffer, size_t capacity) : begin_(buffer), end_(buffer + capacity), cursor_(buffer) {}

    void status_line(int status);  // always "HTTP/1.1": RFC 9110 6.2, our version
    void header(std::string_view name, std::string_view value);
    void header(std::string_view name, uint64_t value);
    void end();  // the empty line

    // Appends raw bytes (a small body placed right after the head, so both
    // leave in one iovec).
    void append(std::string_view bytes);

    bool overflowed() const { return overflowed_; }
    std::string_view bytes() const { return {begin_, static_cast<size_t>(cursor_ - begin_)}; }

private:
    void put(std::string_view text);
    char* begin_;
    char* end_;
    char* cursor_;
    bool overflowed_ = false;
};

}  // namespace portico::http
