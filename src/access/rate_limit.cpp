#include "access/rate_limit.hpp"

#include <uv.h>

#include <algorithm>

#include "access/limit_zones.hpp"
#include "core/log.hpp"
#include "http/status.hpp"

namespace portico::access {

namespace {

// Longer than this apart counts as this long: any bucket has drained by
// then, and the product below stays within 64 bits.
constexpr uint64_t longest_gap_ms = 3'600'000;

}  // namespace

uint64_t LeakyBucket::excess_now(uint64_t stored_excess, uint64_t last_ms, uint64_t now_ms) const {
    uint64_t gap_ms = now_ms > last_ms ? std::min(now_ms - last_ms, longest_gap_ms) : 0;
    uint64_t drained = rate_milli * gap_ms / 1000;
    // nginx's order: the request's 1000 added before the drain is taken
    // off, so requests that come exactly at the rate keep the excess at 0.
    uint64_t with_request = stored_excess + 1000;
    return with_request > drained ? with_request - drained : 0;
}

uint64_t LeakyBucket::wait_ms(uint64_t excess) const {
    if (excess <= delay_milli) return 0;
    return (excess - delay_milli) * 1000 / rate_milli;
}

RateLimitCheck::RateLimitCheck(const config::Config& config, size_t location_index,
                               const LimitZones& zones, metrics::WorkerCounters& counters,
                               uv_loop_t* loop)
    : location_(config.locations[location_index]),
      location_index_(location_index),
      counters_(counters),
      loop_(loop) {
    for (size_t index : location_.limits) {
        const config::LimitConfig& limit = config.limits[index];
        limits_.push_back(std::make_unique<Limit>(Limit{
            .config = limit,
            .table = zones.rate_table(index),
            .key = LimitKey(limit.key),
            .bucket = {.rate_milli = limit.rate_milli,
                       .burst_milli = uint64_t{limit.burst} * 1000,
                       .delay_milli = uint64_t{limit.delay} * 1000}}));
        limits_.back()->position = limits_.size() - 1;
    }
}

bool RateLimitCheck::admit(Limit& limit, uint64_t key, bool count, uint64_t now_ms,
                           uint64_t& excess, bool& log_refusal) {
    TableLock lock(limit.table);
    KeyEntry* entry = nullptr;
    bool added = false;
    if (count)
        entry = limit.table.find_or_add(key, true, added);
    else entry = limit.table.find(key);
    // A key not seen lately starts with nothing in its bucket.
    excess = entry == nullptr || added
                 ? 0
                 : limit.bucket.excess_now(entry->first, entry->second, now_ms);
    if (excess > limit.bucket.burst_milli) [[unlikely]] {
        auto second = static_cast<uint32_t>(now_ms / 1000);
        log_refusal = entry->unused != second;
        entry->unused = second;
        return false;
    }
    if (count) {
        entry->first = excess;
        entry->second = now_ms;
    }
    return true;
}

http::AdmissionCheck::Verdict RateLimitCheck::check(http::Exchange& exchange,
                                                    http::Admission& admission) {
    const http::Request& request = exchange.request();
    if (request.limits_counted) return Verdict::pass;
    request.limits_counted = true;
    uint64_t now_ms = uv_now(loop_);
    uint64_t wait_ms = 0;
    bool log_refusal = false;
    uint64_t excess = 0;
    if (limits_.size() == 1) {
        Limit& limit = *limits_[0];
        uint64_t key = 0;
        if (!limit.key.hash(limit.table, exchange, key)) return Verdict::pass;
        if (!admit(limit, key, true, now_ms, excess, log_refusal))
            return refuse(limit, exchange, log_refusal);
        wait_ms = limit.bucket.wait_ms(excess);
    } else {
        // Every limit asked first, then counted: one that refuses leaves
        // the others' buckets as they were.
        for (size_t i = 0; i < limits_.size(); ++i) {
            Limit& limit = *limits_[i];
            limit.counted = limit.key.hash(limit.table, exchange, limit.hash);
            if (limit.counted && !admit(limit, limit.hash, false, now_ms, excess, log_refusal))
                return refuse(limit, exchange, log_refusal);
        }
        for (size_t i = 0; i < limits_.size(); ++i) {
            if (!limits_[i]->counted) continue;
            // Another worker may have counted the key in between: its
            // answer then is this one's, but the request is not refused
            // after the others let it through.
            if (admit(*limits_[i], limits_[i]->hash, true, now_ms, excess, log_refusal))
                wait_ms = std::max(wait_ms, limits_[i]->bucket.wait_ms(excess));
        }
    }
    if (wait_ms == 0) return Verdict::pass;
    admission.wait_ms(wait_ms);
    return Verdict::wait;
}

http::AdmissionCheck::Verdict RateLimitCheck::refuse(Limit& limit, http::Exchange& exchange,
                                                     bool log_refusal) {
    const http::Request& request = exchange.request();
    request.refused_by = limit.config.name;
    counters_.count_limited(location_index_, limit.position);
    if (log_refusal) {
        log::warn(
            "limit '{}' refused a request of key '{}' to location '{}' with {} (its rate and "
            "burst are spent); this key's refusals are logged at most once a second",
            limit.config.name, limit.key.text(exchange), location_.name, limit.config.status);
    }
    exchange.respond_text(limit.config.status, http::status_text(limit.config.status));
    return Verdict::answered;
}

}  // namespace portico::access
