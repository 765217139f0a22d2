// The two faces of a Snapshot: GET /metrics and GET /stats.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "metrics/compare.hpp"
#include "metrics/saved_snapshots.hpp"
#include "metrics/snapshot.hpp"

namespace portico::metrics {

// Prometheus text exposition format 0.0.4
// (Content-Type: text/plain; version=0.0.4; charset=utf-8).
std::string render_prometheus(const Snapshot& snapshot);

// JSON: totals, per worker slot, per location, per upstream server and per
// upstream (its queue), each histogram as count, sum, p50, p90, p99 and max
// in seconds, and its buckets (counts per bucket, with the bounds once at
// the top as "bucket_bounds").
std::string render_json(const Snapshot& snapshot);

// The saved snapshots (GET /stats/snapshots), oldest first: each with its
// name, when it was taken (UTC), the seconds it counted, and its requests.
std::string render_snapshot_list_json(const SavedSnapshots& snapshots);

// The answer to POST /stats/snapshot: what was saved, and what it displaced.
std::string render_snapshot_saved_json(const SavedSnapshots::Saved& saved);

// GET /stats/compare: both snapshots, the measures (key, label, unit), and
// per location and in total each run's figure and the ratio B / A, keyed by
// measure; null where there is nothing to say.
std::string render_compare_json(const Comparison& comparison);

// Nanoseconds as exact decimal seconds: 50000 -> "0.00005", 10^10 -> "10".
// Exact, unlike going through a double, so `le` labels read as written.
std::string format_seconds(uint64_t ns);

// A Prometheus label value with backslash, double quote and newline escaped.
std::string escape_label_value(std::string_view value);

}  // namespace portico::metrics
