#include "metrics/shared_counters.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <thread>

namespace portico::metrics {

namespace {

constexpr std::string_view max_concurrent_name = "max_concurrent";

// The limits `location` lists, as portico_limited_total names them: its
// [limit.NAME]s in its order, then max_concurrent (WorkerCounters::count_limited).
template <class Visit>
void for_each_limit(const config::Config& config, const config::LocationConfig& location,
                    Visit visit) {
    for (size_t limit : location.limits) visit(std::string_view(config.limits[limit].name));
    if (location.max_concurrent) visit(max_concurrent_name);
}

}  // namespace

Capacity capacity_for(const config::Config& config) {
    unsigned workers = std::max(config.server.workers, std::thread::hardware_concurrency());
    size_t servers = 0;
    size_t limits = 0;
    size_t name_bytes = no_location_name.size();
    for (const config::LocationConfig& location : config.locations) {
        name_bytes += location.name.size();
        for_each_limit(config, location, [&](std::string_view limit) {
            ++limits;
            name_bytes += location.name.size() + limit.size();
        });
    }
    for (const config::UpstreamConfig& upstream : config.upstreams) {
        servers += upstream.servers.size();
        name_bytes += upstream.name.size();
        for (const config::SocketAddress& server : upstream.servers)
            name_bytes += upstream.name.size() + server.text.size();
    }
    return {.slots = 2 * workers + 8,
            .locations = static_cast<uint32_t>(1 + 2 * config.locations.size() + 16),
            .servers = static_cast<uint32_t>(2 * servers + 16),
            .upstreams = static_cast<uint32_t>(2 * config.upstreams.size() + 8),
            .limits = static_cast<uint32_t>(2 * limits + 16),
            .name_bytes = static_cast<uint32_t>(4 * name_bytes + 4096)};
}

std::unique_ptr<SharedCounters> SharedCounters::create(const Capacity& capacity,
                                                       std::string& error) {
    size_t bytes = Region::bytes_needed(capacity);
    void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) {
        error = std::string("mmap of ") + std::to_string(bytes) + " bytes: " + std::strerror(errno);
        return nullptr;
    }
    return std::unique_ptr<SharedCounters>(new SharedCounters(base, bytes, capacity));
}

SharedCounters::SharedCounters(void* base, size_t bytes, const Capacity& capacity)
    : base_(base), bytes_(bytes), region_(Region::build(base, capacity)) {
    // Entry 0, before any config's names: present whatever the config says.
    find_or_add_name(location_names(), no_location_name);
}

SharedCounters::~SharedCounters() {
    munmap(base_, bytes_);
}

std::vector<std::string> SharedCounters::register_names(const config::Config& config) {
    std::vector<std::string> no_room;
    for (const config::LocationConfig& location : config.locations)
        if (find_or_add_name(location_names(), location.name) == region_.capacity().locations)
            no_room.push_back("location " + location.name);
    for (const config::UpstreamConfig& upstream : config.upstreams) {
        if (find_or_add_name(upstream_names(), upstream.name) == region_.capacity().upstreams)
            no_room.push_back("upstream " + upstream.name);
        for (const config::SocketAddress& server : upstream.servers)
            if (find_or_add_pair(server_names(), upstream.name, server.text) ==
                region_.capacity().servers)
                no_room.push_back("upstream " + upstream.name + " server " + server.text);
    }
    for (const config::LocationConfig& location : config.locations)
        for_each_limit(config, location, [&](std::string_view limit) {
            if (find_or_add_pair(limit_names(), location.name, limit) == region_.capacity().limits)
                no_room.push_back("location " + location.name + " limit " + std::string(limit));
        });
    return no_room;
}

uint32_t SharedCounters::find_name(const NameTable& table, std::string_view name) const {
    uint32_t count = table.count.load(std::memory_order_acquire);
    for (uint32_t i = 0; i < count; ++i)
        if (region_.name(table.names[i]) == name) return i;
    return table.capacity;
}

template <class Pair>
uint32_t SharedCounters::find_pair(const PairTable<Pair>& table, std::string_view first,
                                   std::string_view second) const {
    uint32_t count = table.count.load(std::memory_order_acquire);
    for (uint32_t i = 0; i < count; ++i) {
        const Pair& pair = table.pairs[i];
        if (region_.name(pair.*table.first) == first && region_.name(pair.*table.second) == second)
            return i;
    }
    return table.capacity;
}

bool SharedCounters::store_name(std::string_view name, NameRef& ref) {
    std::atomic<uint32_t>& used = region_.header().name_bytes_used;
    uint32_t offset = used.load(std::memory_order_relaxed);
    if (name.size() > region_.capacity().name_bytes - offset) return false;
    std::memcpy(region_.name_bytes() + offset, name.data(), name.size());
    ref = {offset, static_cast<uint32_t>(name.size())};
    used.store(offset + static_cast<uint32_t>(name.size()), std::memory_order_relaxed);
    return true;
}

uint32_t SharedCounters::find_or_add_name(const NameTable& table, std::string_view name) {
    uint32_t entry = find_name(table, name);
    if (entry != table.capacity) return entry;
    entry = table.count.load(std::memory_order_relaxed);
    if (entry == table.capacity || !store_name(name, table.names[entry])) return table.capacity;
    // Release: a reader that sees the count sees the entry and its bytes.
    table.count.store(entry + 1, std::memory_order_release);
    return entry;
}

SharedCounters::NameTable SharedCounters::location_names() const {
    return {region_.location_names(), region_.header().location_count,
            region_.capacity().locations};
}

SharedCounters::NameTable SharedCounters::upstream_names() const {
    return {region_.upstream_names(), region_.header().upstream_count,
            region_.capacity().upstreams};
}

SharedCounters::PairTable<ServerName> SharedCounters::server_names() const {
    return {region_.server_names(), region_.header().server_count, region_.capacity().servers,
            &ServerName::upstream, &ServerName::server};
}

SharedCounters::PairTable<LimitName> SharedCounters::limit_names() const {
    return {region_.limit_names(), region_.header().limit_count, region_.capacity().limits,
            &LimitName::location, &LimitName::limit};
}

template <class Pair>
uint32_t SharedCounters::find_or_add_pair(const PairTable<Pair>& table, std::string_view first,
                                          std::string_view second) {
    uint32_t entry = find_pair(table, first, second);
    if (entry != table.capacity) return entry;
    entry = table.count.load(std::memory_order_relaxed);
    if (entry == table.capacity) return entry;
    Pair& pair = table.pairs[entry];
    // When only the first string fits its bytes are wasted, but the entry
    // is never published, so no reader sees half a name.
    if (!store_name(first, pair.*table.first) || !store_name(second, pair.*table.second))
        return table.capacity;
    table.count.store(entry + 1, std::memory_order_release);
    return entry;
}

SharedCounters::Lease SharedCounters::lease_slot(unsigned worker_index) {
    unsigned slots = region_.capacity().slots;
    auto free_slot = [&](bool same_worker) -> std::optional<unsigned> {
        for (unsigned slot = 0; slot < slots; ++slot) {
            const SlotInfo& info = region_.slot_info(slot);
            if (info.built.load(std::memory_order_relaxed) &&
                info.holders.load(std::memory_order_relaxed) == 0 &&
                (!same_worker || info.worker.load(std::memory_order_relaxed) == worker_index))
                return slot;
        }
        return std::nullopt;
    };
    auto unbuilt_slot = [&]() -> std::optional<unsigned> {
        for (unsigned slot = 0; slot < slots; ++slot)
            if (!region_.slot_info(slot).built.load(std::memory_order_relaxed)) return slot;
        return std::nullopt;
    };
    // A restart takes back its predecessor's slot; then a fresh slot rather
    // than another worker index's history; then any free one.
    std::optional<unsigned> slot = free_slot(true);
    if (!slot) slot = unbuilt_slot();
    if (!slot) slot = free_slot(false);
    Lease lease{slot.value_or(worker_index % slots), !slot};

    SlotInfo& info = region_.slot_info(lease.slot);
    if (!info.built.load(std::memory_order_relaxed)) {
        region_.build_slot(lease.slot);
        region_.totals(lease.slot)
            .reset_epoch.store(region_.header().reset_epoch.load(std::memory_order_relaxed),
                               std::memory_order_relaxed);
        // Release: readers skip the slot until it is fully constructed.
        info.built.store(true, std::memory_order_release);
    }
    bump(info.holders, uint32_t{1});
    info.worker.store(worker_index, std::memory_order_relaxed);
    return lease;
}

void SharedCounters::release_slot(unsigned slot) {
    SlotInfo& info = region_.slot_info(slot);
    uint32_t holders = info.holders.load(std::memory_order_relaxed);
    if (holders == 0) return;
    info.holders.store(holders - 1, std::memory_order_relaxed);
    if (holders != 1) return;
    // Its process is gone, and with it its connections: the gauges it left
    // (a crash leaves them non-zero) must not outlive it. No writer now.
    region_.totals(slot).connections_active.store(0, std::memory_order_relaxed);
    ServerCounters* servers = region_.servers(slot);
    for (uint32_t i = 0; i <= region_.capacity().servers; ++i)
        servers[i].connections_idle.store(0, std::memory_order_relaxed);
    UpstreamCounters* upstreams = region_.upstreams(slot);
    for (uint32_t i = 0; i <= region_.capacity().upstreams; ++i)
        upstreams[i].queued.store(0, std::memory_order_relaxed);
}

void SharedCounters::catch_up_master_totals() {
    MasterTotals& master = region_.header().master;
    uint64_t epoch = region_.header().reset_epoch.load(std::memory_order_relaxed);
    if (master.reset_epoch.load(std::memory_order_relaxed) == epoch) return;
    master.worker_restarts.store(0, std::memory_order_relaxed);
    master.config_reloads_ok.store(0, std::memory_order_relaxed);
    master.config_reloads_failed.store(0, std::memory_order_relaxed);
    master.reset_epoch.store(epoch, std::memory_order_release);
}

void SharedCounters::count_worker_restart() {
    catch_up_master_totals();
    bump(region_.header().master.worker_restarts, uint64_t{1});
}

void SharedCounters::count_config_reload(bool ok) {
    catch_up_master_totals();
    MasterTotals& master = region_.header().master;
    bump(ok ? master.config_reloads_ok : master.config_reloads_failed, uint64_t{1});
}

WorkerCounters SharedCounters::attach(unsigned slot, const config::Config& config) {
    WorkerCounters::Entries entries;
    entries.locations.push_back(find_name(location_names(), no_location_name));
    for (const config::LocationConfig& location : config.locations) {
        entries.locations.push_back(find_name(location_names(), location.name));
        entries.first_limit.push_back(static_cast<uint32_t>(entries.limits.size()));
        for_each_limit(config, location, [&](std::string_view limit) {
            entries.limits.push_back(find_pair(limit_names(), location.name, limit));
        });
    }
    for (const config::UpstreamConfig& upstream : config.upstreams) {
        entries.upstreams.push_back(find_name(upstream_names(), upstream.name));
        entries.first_server.push_back(static_cast<uint32_t>(entries.servers.size()));
        for (const config::SocketAddress& server : upstream.servers)
            entries.servers.push_back(find_pair(server_names(), upstream.name, server.text));
    }
    region_.slot_info(slot).pid.store(static_cast<int32_t>(getpid()), std::memory_order_relaxed);
    return WorkerCounters(region_, slot, std::move(entries));
}

Snapshot SharedCounters::snapshot() const {
    return read_snapshot(region_);
}

void SharedCounters::reset() {
    region_.header().reset_epoch.fetch_add(1, std::memory_order_release);
}

}  // namespace portico::metrics
