// `portico stats [--url http://127.0.0.1:9145] [--watch 1s | --compare A B]`:
// the metrics listener's GET /stats as tables for a terminal: one row per
// location ("-" for requests answered without one), one per upstream
// server, and one per upstream for its queue; or, with --compare, two saved
// snapshots side by side (compare_table.hpp).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

namespace portico::cli {

// argv[0] is "stats". Returns the process exit code: 0, 1 when /stats
// cannot be read (said on stderr), 2 on a bad command line. With --watch it
// redraws until SIGINT or SIGTERM, then returns 0.
int run_stats_command(int argc, char** argv);

// The tables for one /stats document (render_json's format). Counts,
// status classes, percentiles and bytes are totals since start (or the last
// POST /stats/reset); req/s is (current - previous) / interval_seconds per
// location, "-" when `previous_or_null` is null, has no such location, or
// counts went down (a reset in between). Times are in milliseconds. Never
// throws on a document with missing or odd fields: they read as 0.
std::string render_stats_table(const nlohmann::json& previous_or_null,
                               const nlohmann::json& current, double interval_seconds);

}  // namespace portico::cli
