#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>

#include "metrics/histogram.hpp"
#include "durations.hpp"

using portico::metrics::bucket_bounds_ns;
using portico::metrics::bucket_count;
using portico::metrics::bucket_index;
using portico::metrics::HistogramSlot;
using portico::metrics::HistogramSnapshot;

namespace {


HistogramSnapshot snapshot_of(const HistogramSlot& slot) {
    HistogramSnapshot snapshot;
    snapshot.add(slot);
    return snapshot;
}

}  // namespace

TEST_CASE("buckets run from 50 us to 10 s on a log scale", "[metrics]") {
    CHECK(bucket_bounds_ns.front() == 50 * us);
    CHECK(bucket_bounds_ns.back() == 10 * second);
    for (size_t i = 1; i < bucket_bounds_ns.size(); ++i) {
        double ratio = static_cast<double>(bucket_bounds_ns[i]) / bucket_bounds_ns[i - 1];
        CHECK(ratio > 1.3);
        CHECK(ratio < 1.7);
    }
    CHECK(bucket_count == bucket_bounds_ns.size() + 1);
}

TEST_CASE("a value on a bound falls in that bound's bucket (le is inclusive)", "[metrics]") {
    CHECK(bucket_index(0) == 0);
    CHECK(bucket_index(50 * us) == 0);
    CHECK(bucket_index(50 * us + 1) == 1);
    CHECK(bucket_index(75 * us) == 1);
    CHECK(bucket_index(1 * ms) == 8);
    CHECK(bucket_index(1 * ms + 1) == 9);
    CHECK(bucket_index(10 * second) == bucket_count - 2);
    CHECK(bucket_index(10 * second + 1) == bucket_count - 1);
    CHECK(bucket_index(std::numeric_limits<uint64_t>::max()) == bucket_count - 1);
}

TEST_CASE("recording keeps buckets, sum and max", "[metrics]") {
    HistogramSlot slot;
    slot.record(40 * us);
    slot.record(1 * ms);
    slot.record(20 * second);
    HistogramSnapshot snapshot = snapshot_of(slot);
    CHECK(snapshot.count == 3);
    CHECK(snapshot.sum_ns == 40 * us + 1 * ms + 20 * second);
    CHECK(snapshot.max_ns == 20 * second);
    CHECK(snapshot.buckets[0] == 1);
    CHECK(snapshot.buckets[8] == 1);
    CHECK(snapshot.buckets[bucket_count - 1] == 1);

    slot.clear();
    CHECK(snapshot_of(slot).count == 0);
    CHECK(snapshot_of(slot).max_ns == 0);
}

TEST_CASE("percentiles of an empty histogram are zero", "[metrics]") {
    HistogramSnapshot empty;
    CHECK(empty.percentile(0.5) == 0);
    CHECK(empty.percentile(0.99) == 0);
}

TEST_CASE("percentiles of a uniform distribution come out exact", "[metrics]") {
    // 1 us .. 10 ms in 1 us steps: uniform inside every bucket, so linear
    // interpolation is exact.
    HistogramSlot slot;
    for (uint64_t v = 1 * us; v <= 10 * ms; v += 1 * us) slot.record(v);
    HistogramSnapshot snapshot = snapshot_of(slot);
    CHECK(snapshot.count == 10'000);
    CHECK(snapshot.percentile(0.5) == 5 * ms);
    CHECK(snapshot.percentile(0.9) == 9 * ms);
    CHECK(snapshot.percentile(0.99) == 9'900 * us);
    CHECK(snapshot.percentile(1.0) == 10 * ms);
}

TEST_CASE("percentiles interpolate inside the bucket and stop at the max", "[metrics]") {
    HistogramSlot slot;
    for (int i = 0; i < 90; ++i) slot.record(100 * us);  // bucket (75 us, 100 us]
    for (int i = 0; i < 10; ++i) slot.record(5 * ms);    // bucket (3 ms, 5 ms]
    HistogramSnapshot snapshot = snapshot_of(slot);
    // Rank 50 of the 90 in the first bucket: 75 us + 25 us * 50/90.
    CHECK(snapshot.percentile(0.5) == 88'889);
    CHECK(snapshot.percentile(0.9) == 100 * us);
    // Rank 99: 9 of the 10 in (3 ms, 5 ms].
    CHECK(snapshot.percentile(0.99) == 4'800 * us);
    CHECK(snapshot.percentile(1.0) == 5 * ms);

    HistogramSlot narrow;
    for (int i = 0; i < 10; ++i) narrow.record(1'100 * us);  // (1 ms, 1.5 ms], max 1.1 ms
    CHECK(snapshot_of(narrow).percentile(0.99) == 1'100 * us);
}

TEST_CASE("the +Inf bucket interpolates up to the largest value", "[metrics]") {
    HistogramSlot slot;
    slot.record(20 * second);
    slot.record(20 * second);
    HistogramSnapshot snapshot = snapshot_of(slot);
    CHECK(snapshot.percentile(0.5) == 15 * second);
    CHECK(snapshot.percentile(1.0) == 20 * second);
}

TEST_CASE("snapshots sum slots and merge with each other", "[metrics]") {
    HistogramSlot first, later;
    first.record(60 * us);
    first.record(2 * ms);
    later.record(2 * ms);
    later.record(3 * second);

    HistogramSnapshot both;
    both.add(first);
    both.add(later);
    CHECK(both.count == 4);
    CHECK(both.sum_ns == 60 * us + 4 * ms + 3 * second);
    CHECK(both.max_ns == 3 * second);
    CHECK(both.buckets[bucket_index(2 * ms)] == 2);

    HistogramSnapshot merged = snapshot_of(first);
    merged.add(snapshot_of(later));
    CHECK(merged.buckets == both.buckets);
    CHECK(merged.count == both.count);
    CHECK(merged.sum_ns == both.sum_ns);
    CHECK(merged.max_ns == both.max_ns);
}
