// Durations in nanoseconds, the unit of portico's timings and histograms,
// so a test can write 250 * us.
#pragma once

#include <cstdint>

inline constexpr uint64_t us = 1'000;
inline constexpr uint64_t ms = 1'000'000;
inline constexpr uint64_t second = 1'000'000'000;
