// What a reader sees: every slot of the shared region summed into plain
// numbers, ready to render. Taking one reads shared memory only (no lock, no
// system call), so a reader never slows a worker down.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "metrics/histogram.hpp"
#include "metrics/layout.hpp"
#include "metrics/status_codes.hpp"

namespace portico::metrics {

struct WorkerSnapshot {
    unsigned slot = 0;
    unsigned worker = 0;  // the master's worker index that last held the slot
    int pid = 0;          // of its last holder
    bool live = false;    // a process holds the slot now
    uint64_t connections_accepted = 0;
    int64_t connections_active = 0;
    uint64_t requests = 0;
    uint64_t upstream_retries = 0;
    std::array<uint64_t, tls_handshake_names.size()> tls_handshakes{};  // by TlsHandshake
};

struct LocationSnapshot {
    std::string name;
    std::array<uint64_t, status_slot_count> responses{};  // by status_slot()
    std::array<uint64_t, access_denial_names.size()> access_denied{};  // by AccessDenial
    std::array<uint64_t, cache_result_names.size()> cache{};           // by CacheResult
    uint64_t response_bytes = 0;
    uint64_t sendfile_bytes = 0;
    HistogramSnapshot request_duration{};
    HistogramSnapshot upstream_duration{};
    HistogramSnapshot proxy_overhead{};

    uint64_t requests() const;
};

struct ServerSnapshot {
    std::string upstream;
    std::string server;
    uint64_t requests = 0;
    uint64_t connections_opened = 0;
    uint64_t connections_reused = 0;
    int64_t connections_idle = 0;
    std::array<uint64_t, upstream_error_names.size()> errors{};  // by UpstreamError
    HistogramSnapshot connect_time{};
};

struct UpstreamSnapshot {
    std::string name;
    int64_t queued = 0;
    uint64_t queue_timeouts = 0;
};

struct LimitSnapshot {
    std::string location;
    std::string limit;  // a [limit.NAME]'s name, or "max_concurrent"
    uint64_t refused = 0;
};

struct CompressionSnapshot {
    uint64_t responses = 0;
    uint64_t cache_hits = 0;
    uint64_t bytes_in = 0;
    uint64_t bytes_out = 0;
};

struct Http2Snapshot {
    uint64_t sessions = 0;
    uint64_t streams = 0;
    std::array<uint64_t, reset_side_names.size()> resets{};  // by ResetSide
    uint64_t goaways_sent = 0;
};

struct Snapshot {
    uint64_t connections_accepted = 0;
    int64_t connections_active = 0;
    uint64_t upstream_retries = 0;
    std::array<uint64_t, tls_handshake_names.size()> tls_handshakes{};  // by TlsHandshake
    HistogramSnapshot tls_handshake_time{};  // accept to handshake done, full and resumed
    std::array<CompressionSnapshot, config::codings_by_preference.size()> compression{};  // by Coding
    Http2Snapshot http2{};
    // by ProxyProtocolError
    std::array<uint64_t, proxy_protocol_error_names.size()> proxy_protocol_errors{};
    uint64_t worker_restarts = 0;
    uint64_t config_reloads_ok = 0;
    uint64_t config_reloads_failed = 0;
    std::vector<WorkerSnapshot> workers;      // every slot ever leased, by slot
    std::vector<LocationSnapshot> locations;  // every name ever registered, in order ("-" first)
    std::vector<ServerSnapshot> servers;      // likewise
    std::vector<UpstreamSnapshot> upstreams;  // likewise
    std::vector<LimitSnapshot> limits;        // likewise
};

// Every location added up, "-" included: the totals row. Its name is empty.
LocationSnapshot all_locations(const Snapshot& snapshot);

// Sums the region. Counters a slot kept from before the last reset (its
// holder has not recorded since) read as zero; gauges are always read.
Snapshot read_snapshot(const Region& region);

}  // namespace portico::metrics
