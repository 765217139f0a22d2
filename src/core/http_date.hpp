// IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT", RFC 9110 5.6.7), for the
// Date header (cached per second) and Last-Modified, and the parser that
// reads all three date formats back (conditional requests, the cache's
// Date and Expires).
#pragma once

#include <cstddef>
#include <ctime>
#include <optional>
#include <string_view>

namespace portico::core {

inline constexpr size_t http_date_length = 29;

// Writes exactly http_date_length bytes, no terminator.
void format_http_date(time_t when, char* out);

// IMF-fixdate, and the obsolete RFC 850 and asctime forms (RFC 9110 5.6.7),
// surrounding spaces and tabs ignored; nullopt for anything else.
std::optional<time_t> parse_http_date(std::string_view text);

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
