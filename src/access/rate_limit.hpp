// `limit = [...]` of a location: nginx's limit_req, a leaky bucket per key
// held in a table every worker shares (access/limit_zones.hpp), so N workers
// allow the rate once, not N times.
//
// Each key has an excess: how many requests beyond the rate it has made
// lately, draining at the rate. A request adds one. Past `burst` it is
// refused with the limit's status; up to `delay` it passes at once; between
// the two it waits until the excess has drained back to `delay` (its turn
// at the rate). Several limits on one location: a request passes only when
// every one lets it, waits as long as the longest asks, and is counted by
// none when one refuses it (nginx).
#pragma once

#include <uv.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "access/key_table.hpp"
#include "access/limit_key.hpp"
#include "config/config.hpp"
#include "http/admission.hpp"
#include "metrics/worker_counters.hpp"

namespace portico::access {

// The arithmetic of one key's bucket, in thousandths of a request and
// milliseconds of the loop's clock (KeyEntry: first = excess, second = when
// it was last counted), as nginx counts; apart from the table for its tests.
struct LeakyBucket {
    uint64_t rate_milli;  // requests per second x 1000
    uint64_t burst_milli;
    uint64_t delay_milli;
    // The key's excess with this request added, from its stored excess
    // and the time since; > burst_milli: refused.
    uint64_t excess_now(uint64_t stored_excess, uint64_t last_ms, uint64_t now_ms) const;
    // How long a request that brought the excess to `excess` waits, in ms.
    uint64_t wait_ms(uint64_t excess) const;
};

class LimitZones;

class RateLimitCheck final : public http::AdmissionCheck {
public:
    // `location_index`: the location's index in Config::locations. `loop`:
    // whose clock the buckets drain by (the time of its current iteration,
    // as nginx's; CLOCK_MONOTONIC, so the same in every worker).
    RateLimitCheck(const config::Config& config, size_t location_index, const LimitZones& zones,
                   metrics::WorkerCounters& counters, uv_loop_t* loop);
    Verdict check(http::Exchange& exchange, http::Admission& admission) override;

private:
    struct Limit {
        const config::LimitConfig& config;
        KeyTable& table;
        LimitKey key;
        LeakyBucket bucket;
        // This request's key, between asking and counting (several limits).
        uint64_t hash = 0;
        bool counted = false;
        size_t position = 0;  // in the location's `limit` list, for its counter
    };
    // One limit's verdict for `key`: the excess it would have, counted
    // (stored) when `count`. Fills `log_refusal` when refused and the key
    // was not logged in the last second.
    bool admit(Limit& limit, uint64_t key, bool count, uint64_t now_ms, uint64_t& excess,
               bool& log_refusal);
    Verdict refuse(Limit& limit, http::Exchange& exchange, bool log_refusal);

    const config::LocationConfig& location_;
    size_t location_index_;
    metrics::WorkerCounters& counters_;
    uv_loop_t* loop_;
    std::vector<std::unique_ptr<Limit>> limits_;
};

}  // namespace portico::access
