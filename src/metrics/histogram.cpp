#include "metrics/histogram.hpp"

namespace portico::metrics {

void HistogramSlot::clear() {
    for (std::atomic<uint64_t>& bucket : buckets) bucket.store(0, std::memory_order_relaxed);
    sum_ns.store(0, std::memory_order_relaxed);
    max_ns.store(0, std::memory_order_relaxed);
}

void HistogramSnapshot::add(const HistogramSlot& slot) {
    for (size_t i = 0; i < bucket_count; ++i) {
        uint64_t n = slot.buckets[i].load(std::memory_order_relaxed);
        buckets[i] += n;
        count += n;
    }
    sum_ns += slot.sum_ns.load(std::memory_order_relaxed);
    max_ns = std::max(max_ns, slot.max_ns.load(std::memory_order_relaxed));
}

void HistogramSnapshot::add(const HistogramSnapshot& other) {
    for (size_t i = 0; i < bucket_count; ++i) buckets[i] += other.buckets[i];
    count += other.count;
    sum_ns += other.sum_ns;
    max_ns = std::max(max_ns, other.max_ns);
}

uint64_t HistogramSnapshot::percentile(double q) const {
    if (count == 0) return 0;
    double rank = std::clamp(q, 0.0, 1.0) * static_cast<double>(count);
    uint64_t below = 0;
    for (size_t i = 0; i < bucket_count; ++i) {
        if (buckets[i] == 0) continue;
        if (static_cast<double>(below + buckets[i]) >= rank) {
            double low = i == 0 ? 0.0 : static_cast<double>(bucket_bounds_ns[i - 1]);
            // The +Inf bucket has no upper bound; the largest value is one.
            double high = i < bucket_bounds_ns.size() ? static_cast<double>(bucket_bounds_ns[i])
                                                      : static_cast<double>(max_ns);
            double fraction = (rank - static_cast<double>(below)) / static_cast<double>(buckets[i]);
            double value = low + (high - low) * fraction;
            return std::min(static_cast<uint64_t>(value + 0.5), max_ns);
        }
        below += buckets[i];
    }
    return max_ns;
}

}  // namespace portico::metrics
