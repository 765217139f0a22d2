// The shared stores behind the response cache: one per [cache.NAME], sized
// by its `memory`. The master makes them before it forks the workers, and a
// reload keeps a zone's store (its objects) when the zone's name and memory
// are unchanged; the workers find them through worker::Inherited.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

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
    };
    std::vector<Zone> zones_;  // config.caches' order
};

}  // namespace portico::cache
