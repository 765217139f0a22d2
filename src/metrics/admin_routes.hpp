// What the metrics listener answers, apart from the socket work
// (worker/admin_endpoint.*): a request's method, path and query in, a complete
// answer out, so every route and every refusal is unit-tested without a
// socket.
//
//   GET  /                 the dashboard (and its /dashboard.js, ... files)
//   GET  /metrics          Prometheus text format 0.0.4
//   GET  /stats            the same as JSON, with percentiles and buckets
//   POST /stats/reset      zero every counter: 204
//   POST /stats/snapshot?name=NAME   save the counters under NAME: 201
//   GET  /stats/snapshots  the saved snapshots
//   GET  /stats/compare?a=NAME&b=NAME   two snapshots side by side
//   POST /cache/purge?key=KEY or ?prefix=P   remove cached objects: 200 {"purged": N}
//   GET  /healthz          200 while the workers accept, else 503
//
// HEAD is answered wherever GET is. An unknown path is 404, a known one
// with another method 405 (with Allow), a missing or malformed snapshot
// name 400, an unknown one 404.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "metrics/saved_snapshots.hpp"
#include "metrics/shared_counters.hpp"

namespace portico::metrics {

// What the answers read and change; the master owns all of it.
struct AdminContext {
    SharedCounters& counters;
    SavedSnapshots& snapshots;
    std::function<bool()> healthy;
    // More members of /stats' object from the layers above ("\"acme\":{...}"),
    // or "" (unset: none).
    std::function<std::string()> more_stats = nullptr;
    // POST /cache/purge: removes the cached objects whose key is `key`
    // (exact) or starts with it (`prefix`); their count. Unset: no cache
    // zone, the route answers 404.
    std::function<size_t(std::string_view key, bool prefix)> purge_cache = nullptr;
    // More Prometheus text for /metrics from the layers above (the cache
    // zones' bytes and objects), or "" (unset: none).
    std::function<std::string()> more_metrics = nullptr;
};

struct AdminRequest {
    std::string_view method;
    std::string_view path;
    std::string_view query;  // after '?', without it
};

struct AdminResponse {
    int status = 200;
    std::string content_type{};
    std::string body{};
    std::string headers{};  // extra header lines, each ending in \r\n
};

AdminResponse answer_admin_request(const AdminRequest& request, AdminContext& context);

// The value of `key` in a query ("a=x&b=y"), undecoded; nullopt when absent.
std::optional<std::string_view> query_value(std::string_view query, std::string_view key);

}  // namespace portico::metrics
