// Latency histograms with fixed log-scale buckets from 50 µs to 10 s.
//
// The bounds follow the 1, 1.5, 2, 3, 5, 7.5 series: six per decade, each at
// most 1.67 times the one before. That is fine enough for the p50/p90/p99 of
// /stats (interpolated inside one such bucket) and for the proxy overhead,
// which lives in the tens to hundreds of microseconds, while keeping 34 lines
// per series in /metrics. A fixed decimal list, rather than 2^(k/4) steps,
// gives readable `le` labels that never change between portico versions, so
// dashboards and recording rules keep working.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>

#include "metrics/single_writer.hpp"

namespace portico::metrics {

// Upper bounds (inclusive, like Prometheus `le`) in nanoseconds.
// clang-format off
inline constexpr std::array<uint64_t, 33> bucket_bounds_ns = {
                                                        50'000,        75'000,
    100'000,       150'000,       200'000,       300'000,       500'000,       750'000,
    1'000'000,     1'500'000,     2'000'000,     3'000'000,     5'000'000,     7'500'000,
    10'000'000,    15'000'000,    20'000'000,    30'000'000,    50'000'000,    75'000'000,
    100'000'000,   150'000'000,   200'000'000,   300'000'000,   500'000'000,   750'000'000,
    1'000'000'000, 1'500'000'000, 2'000'000'000, 3'000'000'000, 5'000'000'000, 7'500'000'000,
    10'000'000'000,
};
// clang-format on

// One bucket per bound plus the last one, above 10 s (+Inf).
inline constexpr size_t bucket_count = bucket_bounds_ns.size() + 1;

inline size_t bucket_index(uint64_t ns) {
    return static_cast<size_t>(
        std::lower_bound(bucket_bounds_ns.begin(), bucket_bounds_ns.end(), ns) -
        bucket_bounds_ns.begin());
}

// One writer's histogram, in shared memory. There is no count member: the
// count is the sum of the buckets, which spares a store per record and can
// never disagree with the +Inf bucket a reader renders.
struct HistogramSlot {
    std::array<std::atomic<uint64_t>, bucket_count> buckets{};
    std::atomic<uint64_t> sum_ns{0};
    std::atomic<uint64_t> max_ns{0};

    // Only the slot's owner calls these.
    void record(uint64_t ns) {
        bump(buckets[bucket_index(ns)], uint64_t{1});
        bump(sum_ns, ns);
        raise_to(max_ns, ns);
    }
    void clear();
};

// The reader's side: one or more slots summed.
struct HistogramSnapshot {
    std::array<uint64_t, bucket_count> buckets{};
    uint64_t count = 0;
    uint64_t sum_ns = 0;
    uint64_t max_ns = 0;

    void add(const HistogramSlot& slot);
    void add(const HistogramSnapshot& other);

    // The q-quantile (0..1) in nanoseconds, interpolated linearly inside its
    // bucket (as Prometheus' histogram_quantile does) and never above the
    // largest value recorded. 0 when empty.
    uint64_t percentile(double q) const;
};

}  // namespace portico::metrics
