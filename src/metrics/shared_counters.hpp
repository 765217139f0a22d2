// The shared counters region and the master's bookkeeping around it.
//
// Slots: each worker process writes one slot and nobody else writes it. The
// master leases a slot before each fork and releases it when it reaps the
// process. A restarted worker gets back the slot its predecessor held, so it
// keeps adding to the same totals. During a reload the draining workers still
// hold their slots, so the new ones lease others (hence about twice as many
// slots as workers); totals are the sum of all slots ever used, so a reload
// loses nothing.
//
// Names: locations and upstreams are keyed by name and upstream servers by
// (upstream, server as written in `servers`), in a directory that only
// grows. A name kept across reloads keeps its entry and its totals; a
// removed one stays visible with frozen totals, as Prometheus expects of
// counters. The location "-" (no_location_name) is always the first entry.
//
// A host name that workers resolve again (`resolve`) is one entry whatever
// addresses it has now: they come and go at run time (a Kubernetes pod per
// rollout), in each worker on its own, while only the master writes the
// directory, and only at load; entries per address would also grow without
// bound. Its series sum its addresses; the error log names each address.
//
// Capacity is fixed when the region is created (the mapping cannot grow once
// workers share it): see capacity_for. The region is mapped MAP_NORESERVE and
// a slot's pages are touched only once it is leased, so the headroom costs
// address space, not memory.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "metrics/layout.hpp"
#include "metrics/snapshot.hpp"
#include "metrics/worker_counters.hpp"

namespace portico::metrics {

// Room for two full generations of workers (more if the machine has more
// CPUs than the config asks for, so a reload to `workers = "auto"` fits)
// plus a few more, and for twice the config's names plus a few more.
Capacity capacity_for(const config::Config& config);

class SharedCounters {
public:
    // Maps the region; nullptr and `error` when mmap fails. Master, before
    // the first fork.
    static std::unique_ptr<SharedCounters> create(const Capacity& capacity, std::string& error);
    ~SharedCounters();
    SharedCounters(const SharedCounters&) = delete;
    SharedCounters& operator=(const SharedCounters&) = delete;

    // Master: adds the config's location and upstream names, upstream
    // servers and the limits of each location not seen before. Call it before forking workers on a
    // config (at start and after each successful reload). Returns the names that found no room:
    // their requests are not counted until portico restarts (worth a warning).
    std::vector<std::string> register_names(const config::Config& config);

    struct Lease {
        unsigned slot;
        bool shared;  // every slot was held: two live writers share this one, counts may slip
    };
    // Master, before fork(): the slot the new worker process will write.
    Lease lease_slot(unsigned worker_index);
    // Master, after waitpid() reaped the slot's process.
    void release_slot(unsigned slot);

    // Master only.
    void count_worker_restart();
    void count_config_reload(bool ok);

    // Worker, after fork(): its view on the leased slot, with the config's
    // location, upstream and server indexes resolved once. Names the master
    // did not register (or found no room for) are counted nowhere.
    WorkerCounters attach(unsigned slot, const config::Config& config);

    // Any process that has the region mapped.
    Snapshot snapshot() const;
    // Zeroes every counter (gauges describe the present and stay). It only
    // moves the region's reset epoch forward: each writer zeroes its own
    // slot the next time it records, and until then readers count the slot's
    // totals as zero. So a reset never races a worker's stores.
    void reset();

    size_t mapped_bytes() const { return bytes_; }

private:
    // A directory of single names (locations, upstreams); an entry is
    // `capacity` when the name is not in it.
    struct NameTable {
        NameRef* names;
        std::atomic<uint32_t>& count;
        uint32_t capacity;
    };

    // A directory of name pairs: (upstream, server) or (location, limit).
    template <class Pair>
    struct PairTable {
        Pair* pairs;
        std::atomic<uint32_t>& count;
        uint32_t capacity;
        NameRef Pair::*first;
        NameRef Pair::*second;
    };

    SharedCounters(void* base, size_t bytes, const Capacity& capacity);
    NameTable location_names() const;
    NameTable upstream_names() const;
    PairTable<ServerName> server_names() const;
    PairTable<LimitName> limit_names() const;
    uint32_t find_name(const NameTable& table, std::string_view name) const;
    uint32_t find_or_add_name(const NameTable& table, std::string_view name);
    template <class Pair>
    uint32_t find_pair(const PairTable<Pair>& table, std::string_view first,
                       std::string_view second) const;
    template <class Pair>
    uint32_t find_or_add_pair(const PairTable<Pair>& table, std::string_view first,
                              std::string_view second);
    bool store_name(std::string_view name, NameRef& ref);
    void catch_up_master_totals();

    void* base_;
    size_t bytes_;
    Region region_;
};

}  // namespace portico::metrics
