#include "cache/cache_zones.hpp"

#include <algorithm>

namespace portico::cache {

namespace {

std::string definition_of(const config::CacheZoneConfig& zone) {
    return zone.name + '\n' + std::to_string(zone.memory);
}

}  // namespace

std::unique_ptr<CacheZones> CacheZones::create(const config::Config& config, CacheZones* previous,
                                               std::string& error) {
    auto zones = std::make_unique<CacheZones>();
    zones->zones_.resize(config.caches.size());
    // New stores first: a failure leaves `previous` whole.
    std::vector<Zone*> kept(config.caches.size(), nullptr);
    for (size_t i = 0; i < config.caches.size(); ++i) {
        Zone& zone = zones->zones_[i];
        zone.name = config.caches[i].name;
        zone.definition = definition_of(config.caches[i]);
        if (previous != nullptr)
            for (Zone& old : previous->zones_)
                if (old.store != nullptr && old.definition == zone.definition) kept[i] = &old;
        if (kept[i] != nullptr) continue;
        size_t bytes = std::max<size_t>(config.caches[i].memory, Store::minimum_bytes);
        zone.memory = core::SharedMemory::map(bytes, error);
        if (!zone.memory) return nullptr;
        zone.store = Store::create(zone.memory->data(), bytes);
    }
    for (size_t i = 0; i < kept.size(); ++i) {
        if (kept[i] == nullptr) continue;
        zones->zones_[i].memory = std::move(kept[i]->memory);
        zones->zones_[i].store = std::exchange(kept[i]->store, nullptr);
    }
    return zones;
}

size_t CacheZones::purge(std::string_view key, bool prefix) const {
    size_t purged = 0;
    for (const Zone& zone : zones_) {
        core::SharedLock lock(zone.store->mutex());
        purged += zone.store->remove_if([&](std::string_view stored) {
            return prefix ? stored.starts_with(key) : stored == key;
        });
    }
    return purged;
}

std::string CacheZones::render_metrics() const {
    if (zones_.empty()) return {};
    std::string bytes =
        "# HELP portico_cache_bytes Bytes of shared memory holding cached objects.\n"
        "# TYPE portico_cache_bytes gauge\n";
    std::string objects =
        "# HELP portico_cache_objects Objects held by a cache zone.\n"
        "# TYPE portico_cache_objects gauge\n";
    for (const Zone& zone : zones_) {
        uint64_t held = 0;
        uint64_t count = 0;
        {
            core::SharedLock lock(zone.store->mutex());
            held = zone.store->bytes_held();
            count = zone.store->objects();
        }
        bytes += "portico_cache_bytes{zone=\"" + zone.name + "\"} " + std::to_string(held) + "\n";
        objects +=
            "portico_cache_objects{zone=\"" + zone.name + "\"} " + std::to_string(count) + "\n";
    }
    return bytes + objects;
}

}  // namespace portico::cache
