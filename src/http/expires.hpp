// expires = "365d" (nginx's expires): Cache-Control max-age and Expires on
// a location's successful responses. Built once per location: a response
// pays two header copies, and the Expires date is formatted at most once a
// second.
#pragma once

#include <chrono>
#include <ctime>
#include <optional>
#include <string>

#include "core/http_date.hpp"
#include "http/exchange.hpp"

namespace portico::http {

class ExpiresHeaders {
public:
    // `cache_control`: the location's own, which follows max-age (nginx
    // sends both of its Cache-Control lines; one joined line means the same,
    // RFC 9110 5.3).
    ExpiresHeaders(std::chrono::seconds lifetime, const std::optional<std::string>& cache_control);

    // Adds Cache-Control and Expires when `status` is one they apply to.
    void add(Exchange& exchange, int status);

private:
    // Expires is Date + lifetime: the same clock as core::DateCache's Date.
    std::string_view expires_now();

    std::chrono::seconds lifetime_;
    std::string cache_control_;
    time_t second_ = -1;
    char expires_[core::http_date_length]{};
};

}  // namespace portico::http
