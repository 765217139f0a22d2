#include "access/concurrency_limit.hpp"

#include <uv.h>

#include "core/log.hpp"
#include "http/status.hpp"

namespace portico::access {

namespace {

constexpr std::string_view limit_name = "max_concurrent";

}  // namespace

ConcurrencyLimitCheck::ConcurrencyLimitCheck(const config::Config& config, size_t location_index,
                                             KeyTable& table, metrics::WorkerCounters& counters)
    : location_(config.locations[location_index]),
      location_index_(location_index),
      counters_(counters),
      limit_(*location_.max_concurrent),
      table_(table),
      key_(location_.max_concurrent->key),
      location_hash_(table.hash(location_.name)) {}

http::AdmissionVerdict ConcurrencyLimitCheck::check(http::Exchange& exchange,
                                                    http::Admission& admission) {
    const http::Request& request = exchange.request();
    // A request rerouted by an error page holds its slot already.
    if (request.held.give_back != nullptr) return Verdict::pass;
    uint64_t hashes[2] = {0, location_hash_};
    if (!key_.hash(table_, exchange, admission.client(), hashes[0])) return Verdict::pass;
    uint64_t key = table_.hash({reinterpret_cast<const char*>(hashes), sizeof hashes});
    bool log_refusal = false;
    {
        TableLock lock(table_);
        bool added = false;
        KeyEntry* entry = table_.find_or_add(key, false, added);
        if (entry != nullptr && entry->first < limit_.count) {
            ++entry->first;
            request.held = {.give_back = give_back, .owner = &table_, .token = key};
            return Verdict::pass;
        }
        if (entry != nullptr) {
            auto second = static_cast<uint32_t>(uv_hrtime() / 1'000'000'000);
            log_refusal = entry->unused != second;
            entry->unused = second;
        }
        if (entry == nullptr) {
            uint64_t left_out = 0;
            if (full_log_.allow(uv_hrtime() / 1'000'000, left_out))
                log::warn(
                    "max_concurrent of location '{}': its table is full of keys with requests in "
                    "flight ({} of them); requests of new keys pass uncounted ({} more since the "
                    "last line)",
                    location_.name, table_.capacity(), left_out);
            return Verdict::pass;
        }
    }
    request.refused_by = limit_name;
    // Its counter follows the location's [limit.NAME]s (WorkerCounters::count_limited).
    counters_.count_limited(location_index_, location_.limits.size());
    if (log_refusal)
        log::warn(
            "max_concurrent refused a request of key '{}' to location '{}' with {} ({} in "
            "flight); this key's refusals are logged at most once a second",
            key_.text(exchange), location_.name, limit_.status, limit_.count);
    exchange.respond_text(limit_.status, http::status_text(limit_.status));
    return Verdict::answered;
}

void ConcurrencyLimitCheck::give_back(void* table, uint64_t key) {
    auto& keys = *static_cast<KeyTable*>(table);
    TableLock lock(keys);
    KeyEntry* entry = keys.find(key);
    if (entry == nullptr) return;
    if (entry->first > 0) --entry->first;
    if (entry->first == 0) keys.remove(*entry);
}

}  // namespace portico::access
