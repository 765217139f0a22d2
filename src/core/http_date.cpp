#include "core/http_date.hpp"

#include <cstring>

namespace portico::core {

namespace {

constexpr char day_names[7][4] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
constexpr char month_names[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

void put_two_digits(char* out, int value) {
    out[0] = static_cast<char>('0' + value / 10);
    out[1] = static_cast<char>('0' + value % 10);
}

}  // namespace

void format_http_date(time_t when, char* out) {
    struct tm utc;
    gmtime_r(&when, &utc);
    // Hand-formatted: strftime depends on the locale and is slower.
    std::memcpy(out, day_names[utc.tm_wday], 3);
    std::memcpy(out + 3, ", ", 2);
    put_two_digits(out + 5, utc.tm_mday);
    out[7] = ' ';
    std::memcpy(out + 8, month_names[utc.tm_mon], 3);
    out[11] = ' ';
    int year = utc.tm_year + 1900;
    put_two_digits(out + 12, year / 100);
    put_two_digits(out + 14, year % 100);
    out[16] = ' ';
    put_two_digits(out + 17, utc.tm_hour);
    out[19] = ':';
    put_two_digits(out + 20, utc.tm_min);
    out[22] = ':';
    put_two_digits(out + 23, utc.tm_sec);
    std::memcpy(out + 25, " GMT", 4);
}

std::string_view DateCache::now() {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME_COARSE, &ts);
    if (ts.tv_sec != second_) {
        second_ = ts.tv_sec;
        format_http_date(second_, text_);
    }
    return {text_, http_date_length};
}

}  // namespace portico::core
