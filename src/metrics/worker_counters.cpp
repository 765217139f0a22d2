#include "metrics/worker_counters.hpp"

namespace portico::metrics {

WorkerCounters::WorkerCounters(const Region& region, unsigned slot, Entries entries)
    : region_epoch_(&region.header().reset_epoch),
      seen_epoch_(region.totals(slot).reset_epoch.load(std::memory_order_relaxed)),
      totals_(&region.totals(slot)),
      locations_(region.locations(slot)),
      servers_(region.servers(slot)),
      upstreams_(region.upstreams(slot)),
      limits_(region.limits(slot)),
      capacity_(region.capacity()),
      entries_(std::move(entries)) {
    // A reset while the slot had no holder is caught up with right away.
    catch_up_with_reset();
}

void WorkerCounters::start_over() {
    uint64_t epoch = region_epoch_->load(std::memory_order_relaxed);
    // Gauges describe the present (open connections, pooled ones), so they
    // survive a reset; everything counted since the start is zeroed.
    totals_->connections_accepted.store(0, std::memory_order_relaxed);
    totals_->upstream_retries.store(0, std::memory_order_relaxed);
    for (auto& handshakes : totals_->tls_handshakes) handshakes.store(0, std::memory_order_relaxed);
    totals_->tls_handshake_time.clear();
    for (auto& errors : totals_->proxy_protocol_errors) errors.store(0, std::memory_order_relaxed);
    for (CompressionCounters& coding : totals_->compression) {
        coding.responses.store(0, std::memory_order_relaxed);
        coding.cache_hits.store(0, std::memory_order_relaxed);
        coding.bytes_in.store(0, std::memory_order_relaxed);
        coding.bytes_out.store(0, std::memory_order_relaxed);
    }
    Http2Counters& http2 = totals_->http2;
    http2.sessions.store(0, std::memory_order_relaxed);
    http2.streams.store(0, std::memory_order_relaxed);
    for (auto& resets : http2.resets) resets.store(0, std::memory_order_relaxed);
    http2.goaways_sent.store(0, std::memory_order_relaxed);
    for (uint32_t i = 0; i <= capacity_.locations; ++i) locations_[i].clear();
    for (uint32_t i = 0; i <= capacity_.servers; ++i) servers_[i].clear_totals();
    for (uint32_t i = 0; i <= capacity_.upstreams; ++i) upstreams_[i].clear_totals();
    for (uint32_t i = 0; i <= capacity_.limits; ++i)
        limits_[i].refused.store(0, std::memory_order_relaxed);
    // Release: a reader that sees the new epoch also sees the zeros.
    totals_->reset_epoch.store(epoch, std::memory_order_release);
    seen_epoch_ = epoch;
}

}  // namespace portico::metrics
