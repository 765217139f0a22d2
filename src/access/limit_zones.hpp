// The shared tables behind the limits: one per [limit.NAME], sized by its
// zone_size, and one for every location's max_concurrent. The master makes
// them before it forks the workers, and a reload keeps a limit's table
// (its keys and their buckets) when the limit's key, rate and zone_size
// are unchanged: burst, delay and status only read it. The max_concurrent
// table lives as long as the master, so the requests old workers still
// serve during a reload count against the new workers' limits.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "access/key_table.hpp"
#include "config/config.hpp"
#include "core/shared_memory.hpp"

namespace portico::access {

class LimitZones {
public:
    // Master: the tables for `config`, taking over from `previous` (the
    // zones of the config before a reload, or nullptr) those of unchanged
    // limits. nullptr and `error` when memory cannot be mapped; `previous`
    // is then left as it was.
    static std::unique_ptr<LimitZones> create(const config::Config& config,
                                              LimitZones* previous, std::string& error);

    KeyTable& rate_table(size_t limit) const { return *zones_[limit].table; }  // config.limits[limit]
    KeyTable& concurrency_table() const { return *concurrency_.table; }

    // Entries a max_concurrent table has room for: keys with requests in flight.
    static constexpr size_t concurrency_entries = 65536;

private:
    struct Zone {
        std::string definition;  // what must match for a reload to keep it
        std::unique_ptr<core::SharedMemory> memory;
        KeyTable* table = nullptr;
    };
    static bool map(Zone& zone, size_t bytes, std::string& error);

    std::vector<Zone> zones_;  // config.limits' order
    Zone concurrency_;         // only when a location has max_concurrent
};

}  // namespace portico::access
