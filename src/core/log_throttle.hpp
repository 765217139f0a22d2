// A message that could repeat once per request (an upstream that refuses
// every connection) is logged at most once per second, and the next line
// says how many were left out meanwhile: an app that is down must not write
// 75,000 lines in 14 s.
#pragma once

#include <cstdint>
#include <utility>

namespace portico::core {

class LogThrottle {
public:
    static constexpr uint64_t interval_ms = 1000;

    // True when this occurrence is to be logged; `left_out` is then how many
    // were not since the last one that was.
    bool allow(uint64_t now_ms, uint64_t& left_out) {
        if (logged_once_ && now_ms - last_logged_ms_ < interval_ms) {
            ++left_out_;
            return false;
        }
        logged_once_ = true;
        last_logged_ms_ = now_ms;
        left_out = std::exchange(left_out_, 0);
        return true;
    }

private:
    bool logged_once_ = false;
    uint64_t last_logged_ms_ = 0;
    uint64_t left_out_ = 0;
};

}  // namespace portico::core
