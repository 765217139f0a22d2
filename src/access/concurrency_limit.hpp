// max_concurrent = { key, count, status }: nginx's limit_conn, counted per
// request (an HTTP/2 stream is one) in a table every worker shares. A
// request takes a slot of its key when it passes and gives it back when it
// ends, however it ends (its response sent, the client gone, the upstream
// failed, the stream reset): the slot is held by the request
// (http::HeldUntilEnd) and given back when the request is recorded.
//
// Every location's keys share one table (access/limit_zones.hpp), each
// location's apart. Keys with no request in flight leave it, so it holds
// only the keys busy now; when even that is more than it has room for, a
// request passes uncounted (logged once a second), never refused for it.
#pragma once

#include <cstdint>

#include "access/key_table.hpp"
#include "access/limit_key.hpp"
#include "config/config.hpp"
#include "core/log_throttle.hpp"
#include "http/admission.hpp"
#include "metrics/worker_counters.hpp"

namespace portico::access {

class ConcurrencyLimitCheck {
public:
    using Verdict = http::AdmissionVerdict;

    // `location_index`: the location's index in Config::locations.
    ConcurrencyLimitCheck(const config::Config& config, size_t location_index, KeyTable& table,
                          metrics::WorkerCounters& counters);
    Verdict check(http::Exchange& exchange, http::Admission& admission);

private:
    static void give_back(void* table, uint64_t key);

    const config::LocationConfig& location_;
    size_t location_index_;
    metrics::WorkerCounters& counters_;
    const config::ConcurrencyLimitConfig& limit_;
    KeyTable& table_;
    LimitKey key_;
    uint64_t location_hash_;  // mixed into the keys: each location counts its own
    core::LogThrottle full_log_;
};

}  // namespace portico::access
