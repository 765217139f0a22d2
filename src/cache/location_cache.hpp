// What one location's cache shares between its handler (cache_handler.hpp:
// hits, the lock, stale answers) and its response filter (cache_stream.hpp:
// storing what the upstream sends, stale_if_error): its config, its zone's
// store, the worker's copies of the zone's objects and the counters.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "cache/cached_object.hpp"
#include "cache/store.hpp"
#include "config/config.hpp"
#include "http/exchange.hpp"
#include "http/response_filter.hpp"
#include "metrics/worker_counters.hpp"

namespace portico::cache {

class CacheStream;
class DiskTier;
class VariantStream;
using Result = metrics::CacheResult;

struct LocationCache {
    const config::LocationCacheConfig& config;
    size_t location;  // index into Config::locations
    Store& store;
    WorkerCopies& copies;
    metrics::WorkerCounters& counters;
    http::ResponseFilter* filter = nullptr;  // the location's CacheFilter
    // The location's compression filter and the VariantFilter behind it,
    // when it compresses (cache/variant_stream.hpp).
    http::ResponseFilter* compression_filter = nullptr;
    http::ResponseFilter* variant_filter = nullptr;
    DiskTier* disk = nullptr;  // the zone's disk tier (nullptr: no path)
    // The stream of the request being routed now: set by the filter's
    // start, taken by the handler in the same call chain (serve_location
    // wraps the exchange, then runs the handlers).
    CacheStream* started = nullptr;
    // The same for the location's VariantStream (behind its compression),
    // when it has one.
    VariantStream* variant_started = nullptr;

    // The request's result: counted, kept for the access log.
    void record(const http::Request& request, Result result) const;
    // The object for the request, through its Vary marker to its variant;
    // nullptr when none. `looked_up`: the hash the object is stored under,
    // or would be (the key, or its variant's through a Vary marker).
    std::shared_ptr<const CachedObject> lookup(KeyHash key, std::string_view key_text,
                                               const http::Request& request,
                                               KeyHash* looked_up = nullptr) const;
};

// "HIT", "MISS", ... (the status header and the access log).
std::string_view result_text(Result result);

// The hash of the variant a request selects among a Vary response's.
KeyHash variant_key(std::string_view key_text, const std::vector<std::string_view>& names,
                    const http::Request& request);

int64_t unix_seconds();
uint64_t monotonic_ms();

// How old a stored object is now, as the Age header says (RFC 9111 4.2.3).
int64_t age_of(const CachedObject& object, int64_t now);
inline bool is_fresh(const CachedObject& object, int64_t age) {
    return !object.facts().revalidate_always && age < object.facts().lifetime;
}

// Answers the request from `object` on `exchange`: 304 for a conditional
// request it satisfies, 206 (or 416) for a Range, the head alone for HEAD,
// else the whole; with Age, and the status header when the location has one.
void answer_from_object(http::Exchange& exchange, std::shared_ptr<const CachedObject> object,
                        int64_t age, const LocationCache& cache, Result result);

}  // namespace portico::cache
