// The shared stores behind the response cache: one per [cache.NAME], sized
// by its `memory`. The master makes them before it forks the workers, and a
// reload keeps a zone's store (its objects) when the zone's name and memory
// are unchanged; the workers find them through worker::Inherited. A zone
// with a path has a disk tier's index too (cache/disk_index.hpp), kept
// likewise when the name, path and max_size are unchanged.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cache/disk_io.hpp"
#include "cache/store.hpp"
#include "config/config.hpp"
#include "core/shared_memory.hpp"

namespace portico::cache {

class CacheZones {
public:
    // Master: the stores for `config`, taking over from `previous` (the
    // zones before a reload, or nullptr) those of unchanged zones. nullptr
    // and `error` when memory cannot be mapped; `previous` is then left as
    // it was.
    static std::unique_ptr<CacheZones> create(const config::Config& config, CacheZones* previous,
                                              std::string& error);

    Store& store(size_t zone) const { return *zones_[zone].store; }  // config.caches[zone]
    size_t size() const { return zones_.size(); }
    // The zone's disk tier; nullptr without a path.
    const DiskZone* disk(size_t zone) const {
        return zones_[zone].disk.index != nullptr ? &zones_[zone].disk : nullptr;
    }

    // POST /cache/purge: the objects whose key is `key` (exact) or starts
    // with `prefix`, in every zone; their count.
    size_t purge(std::string_view key, bool prefix) const;
    // Prometheus lines: the bytes and objects each zone holds.
    std::string render_metrics() const;

private:
    struct Zone {
        std::string name;
        std::string definition;  // what must match for a reload to keep it
        std::unique_ptr<core::SharedMemory> memory;
        Store* store = nullptr;
        std::string disk_definition;
        std::unique_ptr<core::SharedMemory> disk_memory;
        DiskZone disk;
    };
    // A new disk index for `zone` (its definition set); false and `error`
    // when the memory cannot be mapped.
    static bool map_disk_index(const config::CacheZoneConfig& config, Zone& zone,
                               std::string& error);
    std::vector<Zone> zones_;  // config.caches' order
};

}  // namespace portico::cache
