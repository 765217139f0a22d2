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

std::string_view trim_spaces_and_tabs(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
    return text;
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

std::optional<time_t> parse_http_date(std::string_view text) {
    char copy[64];
    text = trim_spaces_and_tabs(text);
    // An absent field is an empty view whose data may be null: no memcpy.
    if (text.empty() || text.size() >= sizeof copy) return std::nullopt;
    std::memcpy(copy, text.data(), text.size());
    copy[text.size()] = '\0';
    // The process never calls setlocale, so %a and %b read English names.
    static const char* const formats[] = {
        "%a, %d %b %Y %H:%M:%S GMT",  // IMF-fixdate
        "%A, %d-%b-%y %H:%M:%S GMT",  // RFC 850
        "%a %b %e %H:%M:%S %Y",       // asctime
    };
    for (const char* format : formats) {
        struct tm parsed {};
        const char* end = strptime(copy, format, &parsed);
        if (end == nullptr || *end != '\0') continue;
        // strptime lets a space in the format match none, so "...:3994"
        // reads as 39 s in the year 94 (found by fuzz_header_values): no
        // HTTP date is before 1970.
        time_t when = timegm(&parsed);
        if (when >= 0) return when;
    }
    return std::nullopt;
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
