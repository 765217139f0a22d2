#include "access/limit_zones.hpp"

#include <sys/random.h>

#include <algorithm>

namespace portico::access {

namespace {

std::string definition_of(const config::LimitConfig& limit) {
    return limit.name + '\n' + limit.key.source + '\n' + std::to_string(limit.rate_milli) + '\n' +
           std::to_string(limit.zone_bytes);
}

uint64_t random_seed() {
    uint64_t seed = 0;
    // Only a client's guess of the seed is at stake: a short read leaves it
    // partly zero, still unknown to the client.
    (void)!getrandom(&seed, sizeof seed, 0);
    return seed;
}

}  // namespace

bool LimitZones::map(Zone& zone, size_t bytes, std::string& error) {
    bytes = std::max(bytes, KeyTable::bytes_for(16));
    zone.memory = core::SharedMemory::map(bytes, error);
    if (!zone.memory) return false;
    zone.table = KeyTable::create(zone.memory->data(), bytes, random_seed());
    return true;
}

std::unique_ptr<LimitZones> LimitZones::create(const config::Config& config,
                                               LimitZones* previous, std::string& error) {
    auto zones = std::make_unique<LimitZones>();
    zones->zones_.resize(config.limits.size());
    // New tables first: a failure leaves `previous` whole.
    std::vector<Zone*> kept(config.limits.size(), nullptr);
    for (size_t i = 0; i < config.limits.size(); ++i) {
        Zone& zone = zones->zones_[i];
        zone.definition = definition_of(config.limits[i]);
        if (previous != nullptr) {
            for (Zone& old : previous->zones_)
                if (old.table != nullptr && old.definition == zone.definition) kept[i] = &old;
        }
        if (kept[i] == nullptr && !map(zone, config.limits[i].zone_bytes, error)) return nullptr;
    }
    bool concurrency = std::any_of(config.locations.begin(), config.locations.end(),
                                   [](const config::LocationConfig& location) {
                                       return location.max_concurrent.has_value();
                                   });
    if (previous != nullptr && previous->concurrency_.table != nullptr) {
        zones->concurrency_ = std::move(previous->concurrency_);
    } else if (concurrency &&
               !map(zones->concurrency_, KeyTable::bytes_for(concurrency_entries), error)) {
        return nullptr;
    }
    for (size_t i = 0; i < kept.size(); ++i) {
        if (kept[i] == nullptr) continue;
        zones->zones_[i].memory = std::move(kept[i]->memory);
        zones->zones_[i].table = std::exchange(kept[i]->table, nullptr);
    }
    return zones;
}

}  // namespace portico::access
