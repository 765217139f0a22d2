#include "metrics/worker_counters.hpp"

namespace portico::metrics {

WorkerCounters::WorkerCounters(const Region& region, unsigned slot,
                               std::vector<uint32_t> location_entries,
                               std::vector<uint32_t> first_server_entry,
                               std::vector<uint32_t> server_entries)
    : region_epoch_(&region.header().reset_epoch),
      seen_epoch_(region.totals(slot).reset_epoch.load(std::memory_order_relaxed)),
      totals_(&region.totals(slot)),
      locations_(region.locations(slot)),
      servers_(region.servers(slot)),
      location_capacity_(region.capacity().locations),
      server_capacity_(region.capacity().servers),
      location_entries_(std::move(location_entries)),
      first_server_entry_(std::move(first_server_entry)),
      server_entries_(std::move(server_entries)) {
    // A reset while the slot had no holder is caught up with right away.
    catch_up_with_reset();
}

void WorkerCounters::start_over() {
    uint64_t epoch = region_epoch_->load(std::memory_order_relaxed);
    // Gauges describe the present (open connections, pooled ones), so they
    // survive a reset; everything counted since the start is zeroed.
    totals_->connections_accepted.store(0, std::memory_order_relaxed);
    totals_->upstream_retries.store(0, std::memory_order_relaxed);
    for (uint32_t i = 0; i <= location_capacity_; ++i) locations_[i].clear();
    for (uint32_t i = 0; i <= server_capacity_; ++i) servers_[i].clear_totals();
    // Release: a reader that sees the new epoch also sees the zeros.
    totals_->reset_epoch.store(epoch, std::memory_order_release);
    seen_epoch_ = epoch;
}

}  // namespace portico::metrics
