// The two faces of a Snapshot: GET /metrics and GET /stats.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "metrics/snapshot.hpp"

namespace portico::metrics {

// Prometheus text exposition format 0.0.4
// (Content-Type: text/plain; version=0.0.4; charset=utf-8).
std::string render_prometheus(const Snapshot& snapshot);

// JSON: totals, per worker slot, per location and per upstream server, each
// histogram as count, sum, p50, p90, p99 and max in seconds.
std::string render_json(const Snapshot& snapshot);

// Nanoseconds as exact decimal seconds: 50000 -> "0.00005", 10^10 -> "10".
// Exact, unlike going through a double, so `le` labels read as written.
std::string format_seconds(uint64_t ns);

// A Prometheus label value with backslash, double quote and newline escaped.
std::string escape_label_value(std::string_view value);

}  // namespace portico::metrics
