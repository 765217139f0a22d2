// IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT", RFC 9110 5.6.7), for the
// Date header (cached per second) and, later, Last-Modified.
#pragma once

#include <cstddef>
#include <ctime>
#include <string_view>

namespace portico::core {

inline constexpr size_t http_date_length = 29;

// Writes exactly http_date_length bytes, no terminator.
void format_http_date(time_t when, char* out);

// The Date header value, reformatted at most once per wall-clock second.
// CLOCK_REALTIME_COARSE is read through the vDSO: no system call per request.
class DateCache {
public:
    std::string_view now();

private:
    time_t second_ = -1;
    char text_[http_date_length]{};
};

}  // namespace portico::core
