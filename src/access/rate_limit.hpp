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

#include <algorithm>
#include <cstdint>
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
    // Longer than this apart counts as this long: any bucket has drained
    // by then, and the product in excess_now stays within 64 bits.
    static constexpr uint64_t longest_gap_ms = 3'600'000;

    uint64_t rate_milli;  // requests per second x 1000
    uint64_t burst_milli;
    uint64_t delay_milli;
    // The key's excess with this request added, from its stored excess
    // and the time since; > burst_milli: refused.
    uint64_t excess_now(uint64_t stored_excess, uint64_t last_ms, uint64_t now_ms) const {
        uint64_t gap_ms = now_ms > last_ms ? std::min(now_ms - last_ms, longest_gap_ms) : 0;
        uint64_t drained = rate_milli * gap_ms / 1000;
        // nginx's order: the request's 1000 added before the drain is taken
        // off, so requests that come exactly at the rate keep the excess at 0.
        uint64_t with_request = stored_excess + 1000;
        return with_request > drained ? with_request - drained : 0;
    }
    // How long a request that brought the excess to `excess` waits, in ms.
    uint64_t wait_ms(uint64_t excess) const {
        if (excess <= delay_milli) return 0;
        return (excess - delay_milli) * 1000 / rate_milli;
    }
    // The least excess that waits a millisecond or more: below it, wait_ms
    // is 0 without its division. (excess - delay) * 1000 < rate exactly
    // when excess - delay < rate / 1000 rounded up.
    uint64_t waits_from() const { return delay_milli + (rate_milli + 999) / 1000; }
};

class LimitZones;

class RateLimitCheck {
public:
    using Verdict = http::AdmissionVerdict;

    // `location_index`: the location's index in Config::locations. `loop`:
    // whose clock the buckets drain by (the time of its current iteration,
    // as nginx's; CLOCK_MONOTONIC, so the same in every worker).
    RateLimitCheck(const config::Config& config, size_t location_index, const LimitZones& zones,
                   metrics::WorkerCounters& counters, uv_loop_t* loop);
    // Inline for a location of one limit, nearly every one: its key and
    // its bucket, under one lock, in the gate's function.
    [[gnu::always_inline]] Verdict check(http::Exchange& exchange, http::Admission& admission) {
        const http::Request& request = exchange.request();
        if (request.limits_counted) return Verdict::pass;
        request.limits_counted = true;
        uint64_t now_ms = uv_now(loop_);
        if (limits_.size() != 1) [[unlikely]]
            return check_several(exchange, admission, now_ms);
        Limit& limit = limits_[0];
        uint64_t key = 0;
        if (!limit.key.hash(limit.table, exchange, admission.client(), key)) return Verdict::pass;
        Answer answer = admit(limit, key, true, now_ms);
        if (!answer.passed) [[unlikely]]
            return refuse(limit, exchange, answer.log_refusal);
        if (answer.excess < limit.waits_from) [[likely]]
            return Verdict::pass;
        uint64_t wait_ms = limit.bucket.wait_ms(answer.excess);
        if (wait_ms == 0) return Verdict::pass;
        admission.wait_ms(wait_ms);
        return Verdict::wait;
    }

private:
    struct Limit {
        const config::LimitConfig& config;
        KeyTable& table;
        LimitKey key;
        LeakyBucket bucket;
        uint64_t waits_from;  // bucket.waits_from(), made once
        // This request's key, between asking and counting (several limits).
        uint64_t hash = 0;
        bool counted = false;
        size_t position = 0;  // in the location's `limit` list, for its counter
    };
    // One limit's verdict for a key.
    struct Answer {
        bool passed;
        bool log_refusal;  // refused, and the key was not logged in the last second
        uint64_t excess;   // the key's, with this request
    };
    // One limit's verdict for `key`, counted (stored) when `count`.
    [[gnu::always_inline]] static Answer admit(Limit& limit, uint64_t key, bool count,
                                               uint64_t now_ms) {
        TableLock lock(limit.table);
        KeyEntry* entry = nullptr;
        bool added = false;
        if (count)
            entry = limit.table.find_or_add(key, true, added);
        else
            entry = limit.table.find(key);
        // A key not seen lately starts with nothing in its bucket.
        uint64_t excess = entry == nullptr || added
                              ? 0
                              : limit.bucket.excess_now(entry->first, entry->second, now_ms);
        if (excess > limit.bucket.burst_milli) [[unlikely]]
            return {.passed = false, .log_refusal = note_refusal(*entry, now_ms), .excess = excess};
        if (count) {
            entry->first = excess;
            entry->second = now_ms;
        }
        return {.passed = true, .log_refusal = false, .excess = excess};
    }
    // Whether a refusal of `entry`'s key is logged: at most once a second.
    static bool note_refusal(KeyEntry& entry, uint64_t now_ms);
    Verdict check_several(http::Exchange& exchange, http::Admission& admission, uint64_t now_ms);
    Verdict refuse(Limit& limit, http::Exchange& exchange, bool log_refusal);

    const config::LocationConfig& location_;
    size_t location_index_;
    metrics::WorkerCounters& counters_;
    uv_loop_t* loop_;
    std::vector<Limit> limits_;  // reserved: never moved once made
};

}  // namespace portico::access
