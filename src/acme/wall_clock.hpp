// The ACME process's clock: certificates and OCSP responses are dated in
// wall-clock time, so their schedules are kept in it too (milliseconds
// since the epoch), and a delay is logged in whole seconds.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace portico::acme {

inline int64_t wall_now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// "12 s": a delay, rounded up.
inline std::string seconds_text(int64_t ms) {
    return std::to_string((ms + 999) / 1000) + " s";
}

}  // namespace portico::acme
