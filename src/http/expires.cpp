#include "http/expires.hpp"

#include <time.h>

#include "http/status.hpp"

namespace portico::http {

ExpiresHeaders::ExpiresHeaders(std::chrono::seconds lifetime,
                               const std::optional<std::string>& cache_control)
    : lifetime_(lifetime), cache_control_("max-age=" + std::to_string(lifetime.count())) {
    if (cache_control) cache_control_ += ", " + *cache_control;
}

void ExpiresHeaders::add(Exchange& exchange, int status) {
    if (!takes_location_headers(status)) return;
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
