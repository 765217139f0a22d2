// A worker's response caches, for the composition (worker/composition.cpp):
// per location with `cache`, its handler (before the proxy) and its filter
// (in front of the location's others: it stores what the handlers send,
// before compression); per zone, the worker's copies of its objects and
// its disk tier (with a path). A
// location without `cache` gets nothing.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "cache/cache_handler.hpp"
#include "cache/cache_stream.hpp"
#include "cache/cache_zones.hpp"
#include "cache/disk_tier.hpp"
#include "cache/location_cache.hpp"
#include "cache/variant_stream.hpp"
#include "http/server_context.hpp"

namespace portico::cache {

class LocationCaches {
public:
    // `zones`: the stores the master made (nullptr: the config has none).
    LocationCaches(const CacheZones* zones, http::ServerContext& server);

    // Config::locations[location]'s handler, to add before its proxy.
    std::unique_ptr<http::Handler> make_handler(size_t location,
                                                const http::LocationServing& serving);
    // The location's filter, first in front of serving.filter.
    void put_filter_first(size_t location, http::LocationServing& serving);
    // The location's VariantFilter (cache/variant_stream.hpp), for its
    // `compressing` filter to output through; the filter it is.
    http::ResponseFilter& put_behind_compression(size_t location,
                                                 http::ResponseFilter& compressing);

private:
    LocationCache& cache_of(size_t location);

    const CacheZones* zones_;
    http::ServerContext& server_;
    std::vector<std::unique_ptr<WorkerCopies>> copies_;   // by zone
    std::vector<std::unique_ptr<DiskTier>> disks_;        // by zone; nullptr: no path
    std::vector<std::unique_ptr<LocationCache>> caches_;  // by location; nullptr: none
    std::vector<std::unique_ptr<http::ResponseFilter>> filters_;
};

}  // namespace portico::cache
