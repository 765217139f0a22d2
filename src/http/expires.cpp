#include "http/expires.hpp"

#include <time.h>

namespace portico::http {

bool is_expires_status(int status) {
    switch (status) {
    case 200:
    case 201:
    case 204:
    case 206:
    case 301:
    case 302:
    case 303:
    case 304:
    case 307:
    case 308:
        return true;
    default:
        return false;
    }
}

ExpiresHeaders::ExpiresHeaders(std::chrono::seconds lifetime,
                               const std::optional<std::string>& cache_control)
    : lifetime_(lifetime), cache_control_("max-age=" + std::to_string(lifetime.count())) {
    if (cache_control) cache_control_ += ", " + *cache_control;
}

void ExpiresHeaders::add(Exchange& exchange, int status) {
    if (!is_expires_status(status)) return;
    exchange.add_header("Cache-Control", cache_control_);
    exchange.add_header("Expires", expires_now());
}

std::string_view ExpiresHeaders::expires_now() {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME_COARSE, &now);
    if (now.tv_sec != second_) {
        second_ = now.tv_sec;
        core::format_http_date(second_ + static_cast<time_t>(lifetime_.count()), expires_);
    }
    return {expires_, sizeof expires_};
}

}  // namespace portico::http
