// The arithmetic of GET /stats/compare: two saved snapshots side by side,
// per location and in total, with the ratio B / A. `portico stats
// --compare` and the dashboard's compare view show this document as it is,
// so the numbers are worked out in one place.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "metrics/saved_snapshots.hpp"

namespace portico::metrics {

enum class MeasureUnit { count, per_second, seconds };

struct MeasureInfo {
    std::string_view key;    // in the JSON document
    std::string_view label;  // for people (the CLI and the page)
    MeasureUnit unit;
};

// What is compared, in this order. Request time is what a client waits;
// the overhead is the proxy's own share of it (proxied requests only, so a
// location served from disk has none); 5xx keeps a run that "got faster"
// by failing from looking good.
inline constexpr std::array<MeasureInfo, 7> compared_measures = {{
    {"requests", "requests", MeasureUnit::count},
    {"per_second", "req/s", MeasureUnit::per_second},
    {"5xx", "5xx", MeasureUnit::count},
    {"request_p50", "rt p50", MeasureUnit::seconds},
    {"request_p99", "rt p99", MeasureUnit::seconds},
    {"overhead_p50", "ovh p50", MeasureUnit::seconds},
    {"overhead_p99", "ovh p99", MeasureUnit::seconds},
}};

inline constexpr size_t requests_measure = 0;
static_assert(compared_measures[requests_measure].key == "requests");

// One run's figure per measure; absent where there is nothing to say: a
// percentile of no requests, a rate over no time.
using RunFigures = std::array<std::optional<double>, compared_measures.size()>;

struct LocationComparison {
    std::string name{};
    RunFigures a{};
    RunFigures b{};
};

struct Comparison {
    const SavedSnapshot* a = nullptr;
    const SavedSnapshot* b = nullptr;
    // Locations with requests in either run: A's order, then those only B has.
    std::vector<LocationComparison> locations{};
    LocationComparison total{};  // every location together, "-" included
};

Comparison compare(const SavedSnapshot& a, const SavedSnapshot& b);

// B / A, absent when either is, or A is 0 (no meaningful ratio).
std::optional<double> ratio(std::optional<double> a, std::optional<double> b);

}  // namespace portico::metrics
