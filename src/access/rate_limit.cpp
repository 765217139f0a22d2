#include "access/rate_limit.hpp"

#include <uv.h>

#include "access/limit_zones.hpp"
#include "core/log.hpp"
#include "http/status.hpp"

namespace portico::access {

RateLimitCheck::RateLimitCheck(const config::Config& config, size_t location_index,
                               const LimitZones& zones, metrics::WorkerCounters& counters,
                               uv_loop_t* loop)
    : location_(config.locations[location_index]),
      location_index_(location_index),
      counters_(counters),
      loop_(loop) {
    limits_.reserve(location_.limits.size());
    for (size_t index : location_.limits) {
        const config::LimitConfig& limit = config.limits[index];
        LeakyBucket bucket{.rate_milli = limit.rate_milli,
                           .burst_milli = uint64_t{limit.burst} * 1000,
                           .delay_milli = uint64_t{limit.delay} * 1000};
        limits_.push_back(Limit{.config = limit,
                                .table = zones.rate_table(index),
                                .key = LimitKey(limit.key),
                                .bucket = bucket,
                                .waits_from = bucket.waits_from(),
                                .position = limits_.size()});
    }
}

bool RateLimitCheck::note_refusal(KeyEntry& entry, uint64_t now_ms) {
    auto second = static_cast<uint32_t>(now_ms / 1000);
    bool log = entry.unused != second;
    entry.unused = second;
    return log;
}

RateLimitCheck::Verdict RateLimitCheck::check_several(http::Exchange& exchange,
                                                      http::Admission& admission, uint64_t now_ms) {
    // Every limit asked first, then counted: one that refuses leaves the
    // others' buckets as they were.
    for (Limit& limit : limits_) {
        limit.counted = limit.key.hash(limit.table, exchange, admission.client(), limit.hash);
        if (!limit.counted) continue;
        Answer answer = admit(limit, limit.hash, false, now_ms);
        if (!answer.passed) return refuse(limit, exchange, answer.log_refusal);
    }
    uint64_t wait_ms = 0;
    for (Limit& limit : limits_) {
        if (!limit.counted) continue;
        // Another worker may have counted the key in between: its answer
        // then is this one's, but the request is not refused after the
        // others let it through.
        if (Answer answer = admit(limit, limit.hash, true, now_ms); answer.passed)
            wait_ms = std::max(wait_ms, limit.bucket.wait_ms(answer.excess));
    }
    if (wait_ms == 0) return Verdict::pass;
    admission.wait_ms(wait_ms);
    return Verdict::wait;
}

RateLimitCheck::Verdict RateLimitCheck::refuse(Limit& limit, http::Exchange& exchange,
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
