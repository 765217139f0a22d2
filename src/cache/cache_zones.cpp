#include "cache/cache_zones.hpp"

#include <algorithm>

namespace portico::cache {

namespace {

std::string definition_of(const config::CacheZoneConfig& zone) {
    return zone.name + '\n' + std::to_string(zone.memory);
}

std::string disk_definition_of(const config::CacheZoneConfig& zone) {
    if (zone.path.empty()) return {};
    return zone.name + '\n' + zone.path + '\n' + std::to_string(zone.max_size);
}

}  // namespace

std::unique_ptr<CacheZones> CacheZones::create(const config::Config& config, CacheZones* previous,
                                               std::string& error) {
    auto zones = std::make_unique<CacheZones>();
    zones->zones_.resize(config.caches.size());
    // New stores first: a failure leaves `previous` whole.
    std::vector<Zone*> kept(config.caches.size(), nullptr);
    std::vector<Zone*> kept_disk(config.caches.size(), nullptr);
    for (size_t i = 0; i < config.caches.size(); ++i) {
        Zone& zone = zones->zones_[i];
        zone.name = config.caches[i].name;
        zone.definition = definition_of(config.caches[i]);
        zone.disk_definition = disk_definition_of(config.caches[i]);
        if (previous != nullptr)
            for (Zone& old : previous->zones_) {
                if (old.store != nullptr && old.definition == zone.definition) kept[i] = &old;
                if (old.disk.index != nullptr && !zone.disk_definition.empty() &&
                    old.disk_definition == zone.disk_definition)
                    kept_disk[i] = &old;
            }
        if (kept_disk[i] == nullptr && !zone.disk_definition.empty() &&
            !map_disk_index(config.caches[i], zone, error))
            return nullptr;
        if (kept[i] != nullptr) continue;
        size_t bytes = std::max<size_t>(config.caches[i].memory, Store::minimum_bytes);
        zone.memory = core::SharedMemory::map(bytes, error);
        if (!zone.memory) return nullptr;
        zone.store = Store::create(zone.memory->data(), bytes);
    }
    for (size_t i = 0; i < kept.size(); ++i) {
        if (kept[i] != nullptr) {
            zones->zones_[i].memory = std::move(kept[i]->memory);
            zones->zones_[i].store = std::exchange(kept[i]->store, nullptr);
        }
        if (kept_disk[i] != nullptr) {
            zones->zones_[i].disk_memory = std::move(kept_disk[i]->disk_memory);
            zones->zones_[i].disk = std::exchange(kept_disk[i]->disk, DiskZone{});
        }
    }
    return zones;
}

bool CacheZones::map_disk_index(const config::CacheZoneConfig& config, Zone& zone,
                                std::string& error) {
    size_t slots = DiskIndex::slots_for(config.max_size);
    zone.disk_memory = core::SharedMemory::map(DiskIndex::bytes_for(slots), error);
    if (!zone.disk_memory) return false;
    zone.disk = {config.name, config.path,
                 DiskIndex::create(zone.disk_memory->data(), slots, config.max_size)};
    return true;
}

size_t CacheZones::purge(std::string_view key, bool prefix) const {
    size_t purged = 0;
    for (const Zone& zone : zones_) {
        // The disk first: a memory miss meanwhile would read it back.
        size_t on_disk = zone.disk.index != nullptr ? purge_disk(zone.disk, key, prefix) : 0;
        size_t in_memory = 0;
        {
            core::SharedLock lock(zone.store->mutex());
            in_memory = zone.store->remove_if([&](std::string_view stored) {
                return prefix ? stored.starts_with(key) : stored == key;
            });
        }
        // Write-through: what memory holds is on disk too (unless its write
        // failed), so the larger count is the objects' (each counted once).
        purged += std::max(in_memory, on_disk);
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
    std::string disk_bytes;
    std::string disk_objects;
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
        if (zone.disk.index == nullptr) continue;
        disk_bytes += "portico_cache_disk_bytes{zone=\"" + zone.name + "\"} " +
                      std::to_string(zone.disk.index->bytes()) + "\n";
        disk_objects += "portico_cache_disk_objects{zone=\"" + zone.name + "\"} " +
                        std::to_string(zone.disk.index->objects()) + "\n";
    }
    std::string disk;
    if (!disk_bytes.empty())
        disk =
            "# HELP portico_cache_disk_bytes Bytes of the files of a cache zone's disk tier.\n"
            "# TYPE portico_cache_disk_bytes gauge\n" +
            disk_bytes +
            "# HELP portico_cache_disk_objects Objects in a cache zone's disk tier.\n"
            "# TYPE portico_cache_disk_objects gauge\n" +
            disk_objects;
    return bytes + objects + disk;
}

}  // namespace portico::cache
