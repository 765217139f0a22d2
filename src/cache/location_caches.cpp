#include "cache/location_caches.hpp"

namespace portico::cache {

namespace {
// What a worker keeps of the objects it answered, for the next hits.
constexpr uint64_t worker_copies_bytes = 64 * 1024 * 1024;
}  // namespace

LocationCaches::LocationCaches(const CacheZones* zones, http::ServerContext& server)
    : zones_(zones), server_(server) {
    if (zones_ == nullptr) return;
    for (size_t i = 0; i < zones_->size(); ++i) {
        copies_.push_back(std::make_unique<WorkerCopies>(worker_copies_bytes / zones_->size()));
        const DiskZone* disk = zones_->disk(i);
        disks_.push_back(disk != nullptr
                             ? std::make_unique<DiskTier>(*disk, zones_->store(i), server_.loop)
                             : nullptr);
    }
    caches_.resize(server.config.locations.size());
}

LocationCache& LocationCaches::cache_of(size_t location) {
    std::unique_ptr<LocationCache>& cache = caches_[location];
    if (!cache) {
        const config::LocationCacheConfig& config = *server_.config.locations[location].cache;
        cache = std::make_unique<LocationCache>(LocationCache{
            config, location, zones_->store(config.zone), *copies_[config.zone], server_.counters});
        cache->disk = disks_[config.zone].get();
    }
    return *cache;
}

std::unique_ptr<http::Handler> LocationCaches::make_handler(size_t location,
                                                            const http::LocationServing& serving) {
    return std::make_unique<CacheHandler>(cache_of(location), serving, server_.poller);
}

http::ResponseFilter& LocationCaches::put_behind_compression(size_t location,
                                                             http::ResponseFilter& compressing) {
    filters_.push_back(std::make_unique<VariantFilter>(cache_of(location)));
    compressing.output_through(*filters_.back());
    cache_of(location).compression_filter = &compressing;
    cache_of(location).variant_filter = filters_.back().get();
    return *filters_.back();
}

void LocationCaches::put_filter_first(size_t location, http::LocationServing& serving) {
    filters_.push_back(std::make_unique<CacheFilter>(cache_of(location)));
    cache_of(location).filter = filters_.back().get();
    if (serving.filter) filters_.back()->output_through(*serving.filter);
    serving.filter = filters_.back().get();
}

}  // namespace portico::cache
