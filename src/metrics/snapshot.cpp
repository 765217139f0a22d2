#include "metrics/snapshot.hpp"

namespace portico::metrics {

namespace {

uint64_t load(const std::atomic<uint64_t>& counter) {
    return counter.load(std::memory_order_relaxed);
}

// Returns the requests it added, for the per-worker figure.
uint64_t add_location(LocationSnapshot& into, const LocationCounters& from) {
    uint64_t requests = 0;
    for (size_t i = 0; i < status_slot_count; ++i) {
        uint64_t n = load(from.responses[i]);
        into.responses[i] += n;
        requests += n;
    }
    for (size_t i = 0; i < into.access_denied.size(); ++i)
        into.access_denied[i] += load(from.access_denied[i]);
    for (size_t i = 0; i < into.cache.size(); ++i) into.cache[i] += load(from.cache[i]);
    into.response_bytes += load(from.response_bytes);
    into.sendfile_bytes += load(from.sendfile_bytes);
    into.request_duration.add(from.request_duration);
    into.upstream_duration.add(from.upstream_duration);
    into.proxy_overhead.add(from.proxy_overhead);
    return requests;
}

void add_server(ServerSnapshot& into, const ServerCounters& from) {
    into.requests += load(from.requests);
    into.connections_opened += load(from.connections_opened);
    into.connections_reused += load(from.connections_reused);
    for (size_t i = 0; i < into.errors.size(); ++i) into.errors[i] += load(from.errors[i]);
    into.connect_time.add(from.connect_time);
}

void read_master_totals(const RegionHeader& header, uint64_t epoch, Snapshot& snapshot) {
    const MasterTotals& master = header.master;
    if (master.reset_epoch.load(std::memory_order_acquire) != epoch) return;
    snapshot.worker_restarts = load(master.worker_restarts);
    snapshot.config_reloads_ok = load(master.config_reloads_ok);
    snapshot.config_reloads_failed = load(master.config_reloads_failed);
}

}  // namespace

uint64_t LocationSnapshot::requests() const {
    uint64_t total = 0;
    for (uint64_t n : responses) total += n;
    return total;
}

LocationSnapshot all_locations(const Snapshot& snapshot) {
    LocationSnapshot sum;
    for (const LocationSnapshot& location : snapshot.locations) {
        for (size_t slot = 0; slot < status_slot_count; ++slot)
            sum.responses[slot] += location.responses[slot];
        for (size_t i = 0; i < sum.access_denied.size(); ++i)
            sum.access_denied[i] += location.access_denied[i];
        for (size_t i = 0; i < sum.cache.size(); ++i) sum.cache[i] += location.cache[i];
        sum.response_bytes += location.response_bytes;
        sum.sendfile_bytes += location.sendfile_bytes;
        sum.request_duration.add(location.request_duration);
        sum.upstream_duration.add(location.upstream_duration);
        sum.proxy_overhead.add(location.proxy_overhead);
    }
    return sum;
}

Snapshot read_snapshot(const Region& region) {
    Snapshot snapshot;
    // Acquire pairs with the master's release when it published the entries.
    uint32_t location_count = region.header().location_count.load(std::memory_order_acquire);
    uint32_t server_count = region.header().server_count.load(std::memory_order_acquire);
    uint32_t upstream_count = region.header().upstream_count.load(std::memory_order_acquire);
    uint32_t limit_count = region.header().limit_count.load(std::memory_order_acquire);
    for (uint32_t i = 0; i < location_count; ++i)
        snapshot.locations.push_back(
            {.name = std::string(region.name(region.location_names()[i]))});
    for (uint32_t i = 0; i < server_count; ++i) {
        const ServerName& name = region.server_names()[i];
        snapshot.servers.push_back({.upstream = std::string(region.name(name.upstream)),
                                    .server = std::string(region.name(name.server))});
    }
    for (uint32_t i = 0; i < upstream_count; ++i)
        snapshot.upstreams.push_back(
            {.name = std::string(region.name(region.upstream_names()[i]))});
    for (uint32_t i = 0; i < limit_count; ++i) {
        const LimitName& name = region.limit_names()[i];
        snapshot.limits.push_back({.location = std::string(region.name(name.location)),
                                   .limit = std::string(region.name(name.limit))});
    }

    uint64_t epoch = region.header().reset_epoch.load(std::memory_order_acquire);
    read_master_totals(region.header(), epoch, snapshot);
    for (unsigned slot = 0; slot < region.capacity().slots; ++slot) {
        const SlotInfo& info = region.slot_info(slot);
        // Never-leased slots are skipped, which also leaves their pages unmapped.
        if (!info.built.load(std::memory_order_acquire)) continue;
        const SlotTotals& totals = region.totals(slot);
        const ServerCounters* servers = region.servers(slot);
        const UpstreamCounters* upstreams = region.upstreams(slot);
        WorkerSnapshot worker{
            .slot = slot,
            .worker = info.worker.load(std::memory_order_relaxed),
            .pid = info.pid.load(std::memory_order_relaxed),
            .live = info.holders.load(std::memory_order_relaxed) > 0,
            .connections_active = totals.connections_active.load(std::memory_order_relaxed)};
        snapshot.connections_active += worker.connections_active;
        for (uint32_t i = 0; i < server_count; ++i)
            snapshot.servers[i].connections_idle +=
                servers[i].connections_idle.load(std::memory_order_relaxed);
        for (uint32_t i = 0; i < upstream_count; ++i)
            snapshot.upstreams[i].queued += upstreams[i].queued.load(std::memory_order_relaxed);

        // Acquire pairs with WorkerCounters::start_over: the new epoch
        // implies the zeros written before it. A reader that loaded the old
        // epoch just before a reset may sum a slot its owner is zeroing; only
        // that one read is mixed.
        bool counts_since_reset = totals.reset_epoch.load(std::memory_order_acquire) == epoch;
        if (counts_since_reset) {
            worker.connections_accepted = load(totals.connections_accepted);
            worker.upstream_retries = load(totals.upstream_retries);
            for (size_t i = 0; i < worker.tls_handshakes.size(); ++i)
                worker.tls_handshakes[i] = load(totals.tls_handshakes[i]);
            snapshot.tls_handshake_time.add(totals.tls_handshake_time);
            for (size_t i = 0; i < snapshot.compression.size(); ++i) {
                snapshot.compression[i].responses += load(totals.compression[i].responses);
                snapshot.compression[i].cache_hits += load(totals.compression[i].cache_hits);
                snapshot.compression[i].bytes_in += load(totals.compression[i].bytes_in);
                snapshot.compression[i].bytes_out += load(totals.compression[i].bytes_out);
            }
            snapshot.http2.sessions += load(totals.http2.sessions);
            snapshot.http2.streams += load(totals.http2.streams);
            for (size_t i = 0; i < snapshot.http2.resets.size(); ++i)
                snapshot.http2.resets[i] += load(totals.http2.resets[i]);
            snapshot.http2.goaways_sent += load(totals.http2.goaways_sent);
            for (size_t i = 0; i < snapshot.proxy_protocol_errors.size(); ++i)
                snapshot.proxy_protocol_errors[i] += load(totals.proxy_protocol_errors[i]);
            const LocationCounters* locations = region.locations(slot);
            for (uint32_t i = 0; i < location_count; ++i)
                worker.requests += add_location(snapshot.locations[i], locations[i]);
            for (uint32_t i = 0; i < server_count; ++i) add_server(snapshot.servers[i], servers[i]);
            for (uint32_t i = 0; i < upstream_count; ++i)
                snapshot.upstreams[i].queue_timeouts += load(upstreams[i].queue_timeouts);
            const LimitCounters* limits = region.limits(slot);
            for (uint32_t i = 0; i < limit_count; ++i)
                snapshot.limits[i].refused += load(limits[i].refused);
        }
        snapshot.connections_accepted += worker.connections_accepted;
        snapshot.upstream_retries += worker.upstream_retries;
        for (size_t i = 0; i < worker.tls_handshakes.size(); ++i)
            snapshot.tls_handshakes[i] += worker.tls_handshakes[i];
        snapshot.workers.push_back(worker);
    }
    return snapshot;
}

}  // namespace portico::metrics
