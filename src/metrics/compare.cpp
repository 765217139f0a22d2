#include "metrics/compare.hpp"

namespace portico::metrics {

namespace {

std::optional<double> seconds_at(const HistogramSnapshot& histogram, double q) {
    if (histogram.count == 0) return std::nullopt;
    return static_cast<double>(histogram.percentile(q)) / 1e9;
}

RunFigures figures(const LocationSnapshot& location, uint64_t counted_ns) {
    uint64_t requests = location.requests();
    uint64_t server_errors = 0;
    for (size_t slot = 0; slot < status_slot_count; ++slot)
        if (status_class(slot) == 5) server_errors += location.responses[slot];
    std::optional<double> per_second;
    if (counted_ns > 0)
        per_second = static_cast<double>(requests) / (static_cast<double>(counted_ns) / 1e9);
    return {static_cast<double>(requests),
            per_second,
            static_cast<double>(server_errors),
            seconds_at(location.request_duration, 0.5),
            seconds_at(location.request_duration, 0.99),
            seconds_at(location.proxy_overhead, 0.5),
            seconds_at(location.proxy_overhead, 0.99)};
}

// A location absent from a run (added or removed by a reload in between)
// compares as one that had no requests.
RunFigures figures_of(const SavedSnapshot& run, const std::string& name) {
    for (const LocationSnapshot& location : run.counters.locations)
        if (location.name == name) return figures(location, run.counted_ns);
    return figures(LocationSnapshot{.name = name}, run.counted_ns);
}

}  // namespace

std::optional<double> ratio(std::optional<double> a, std::optional<double> b) {
    if (!a || !b || *a == 0.0) return std::nullopt;
    return *b / *a;
}

Comparison compare(const SavedSnapshot& a, const SavedSnapshot& b) {
    Comparison comparison{.a = &a, .b = &b};
    auto add_if_used = [&](const LocationSnapshot& location) {
        for (const LocationComparison& listed : comparison.locations)
            if (listed.name == location.name) return;
        LocationComparison row{.name = location.name,
                               .a = figures_of(a, location.name),
                               .b = figures_of(b, location.name)};
        if (row.a[requests_measure].value_or(0) > 0 || row.b[requests_measure].value_or(0) > 0)
            comparison.locations.push_back(std::move(row));
    };
    for (const LocationSnapshot& location : a.counters.locations) add_if_used(location);
    for (const LocationSnapshot& location : b.counters.locations) add_if_used(location);
    comparison.total = {.name = "total",
                        .a = figures(all_locations(a.counters), a.counted_ns),
                        .b = figures(all_locations(b.counters), b.counted_ns)};
    return comparison;
}

}  // namespace portico::metrics
