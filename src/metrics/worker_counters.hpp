// A worker's handle on its own slot of the shared counters: the only code on
// the request path. Every call is a handful of relaxed loads and stores into
// memory no other process writes: no lock, no system call, no lookup (the
// config's location, upstream and server indexes were turned into slot
// entries once, in SharedCounters::attach).
#pragma once

#include <cstdint>
#include <vector>

#include "metrics/layout.hpp"

namespace portico::metrics {

// What the request timeline hands over once the last response byte is out.
struct RequestRecord {
    int status = 0;
    uint64_t response_bytes = 0;  // written to the client, head and body
    uint64_t sendfile_bytes = 0;  // the part of them sent with sendfile(2)
    uint64_t duration_ns = 0;     // first request byte to last response byte
    bool proxied = false;         // went upstream; upstream_ns is set
    uint64_t upstream_ns = 0;     // request sent upstream to last upstream byte
};

class WorkerCounters {
public:
    void connection_accepted() {
        catch_up_with_reset();
        bump(totals_->connections_accepted, uint64_t{1});
        bump(totals_->connections_active, int64_t{1});
    }
    void connection_closed() {
        catch_up_with_reset();
        bump(totals_->connections_active, int64_t{-1});
    }

    // `ns`: from the accept to the end of the handshake (completed ones only).
    void tls_handshake_finished(TlsHandshake result, uint64_t ns) {
        catch_up_with_reset();
        bump(totals_->tls_handshakes[static_cast<size_t>(result)], uint64_t{1});
        if (result != TlsHandshake::failed) totals_->tls_handshake_time.record(ns);
    }

    // A connection to a proxy_protocol listener closed without a valid header.
    void proxy_protocol_failed(ProxyProtocolError reason) {
        catch_up_with_reset();
        bump(totals_->proxy_protocol_errors[static_cast<size_t>(reason)], uint64_t{1});
    }

    void http2_session_started() {
        catch_up_with_reset();
        bump(totals_->http2.sessions, uint64_t{1});
    }
    void http2_stream_opened() {
        catch_up_with_reset();
        bump(totals_->http2.streams, uint64_t{1});
    }
    void http2_stream_reset(ResetSide side) {
        catch_up_with_reset();
        bump(totals_->http2.resets[static_cast<size_t>(side)], uint64_t{1});
    }
    void http2_goaway_sent() {
        catch_up_with_reset();
        bump(totals_->http2.goaways_sent, uint64_t{1});
    }

    // A response compressed on the fly went out whole: `in` body bytes
    // became `out`; `cached`: compressed before, kept by the compressed cache.
    void response_compressed(config::Coding coding, uint64_t in, uint64_t out, bool cached) {
        catch_up_with_reset();
        CompressionCounters& counters = totals_->compression[static_cast<size_t>(coding)];
        bump(counters.responses, uint64_t{1});
        if (cached) bump(counters.cache_hits, uint64_t{1});
        bump(counters.bytes_in, in);
        bump(counters.bytes_out, out);
    }

    // `location` is the index into Config::locations, or -1 for a request
    // answered without one (counted under no_location_name). The proxy
    // overhead is recorded for proxied requests only: for a file or a fixed
    // response the whole duration is the proxy's and already in the request
    // histogram.
    void request_finished(int location, const RequestRecord& request) {
        catch_up_with_reset();
        LocationCounters& counters =
            locations_[entries_.locations[static_cast<size_t>(location + 1)]];
        bump(counters.responses[status_slot(request.status)], uint64_t{1});
        bump(counters.response_bytes, request.response_bytes);
        bump(counters.sendfile_bytes, request.sendfile_bytes);
        counters.request_duration.record(request.duration_ns);
        if (request.proxied) {
            counters.upstream_duration.record(request.upstream_ns);
            uint64_t overhead = request.duration_ns > request.upstream_ns
                                    ? request.duration_ns - request.upstream_ns
                                    : 0;
            counters.proxy_overhead.record(overhead);
        }
    }

    // A request to Config::locations[location] refused by one of its limits:
    // `limit` is the limit's position in the location's `limit` list, or the
    // list's size for its max_concurrent.
    void count_limited(size_t location, size_t limit) {
        catch_up_with_reset();
        bump(limits_[entries_.limits[entries_.first_limit[location] + limit]].refused, uint64_t{1});
    }
    // A request to Config::locations[location] refused access (403 by
    // allow/deny, 401 by Basic auth).
    void count_access_denied(size_t location, AccessDenial reason) {
        catch_up_with_reset();
        bump(
            locations_[entries_.locations[location + 1]].access_denied[static_cast<size_t>(reason)],
            uint64_t{1});
    }

    // What a location's response cache did with a request.
    void count_cache(size_t location, CacheResult result) {
        catch_up_with_reset();
        bump(locations_[entries_.locations[location + 1]].cache[static_cast<size_t>(result)],
             uint64_t{1});
    }

    // `upstream` indexes Config::upstreams, `server` its servers.
    void upstream_connected(size_t upstream, size_t server, uint64_t connect_ns) {
        catch_up_with_reset();
        ServerCounters& counters = server_counters(upstream, server);
        bump(counters.connections_opened, uint64_t{1});
        counters.connect_time.record(connect_ns);
    }
    void upstream_request_sent(size_t upstream, size_t server, bool reused_connection) {
        catch_up_with_reset();
        ServerCounters& counters = server_counters(upstream, server);
        bump(counters.requests, uint64_t{1});
        if (reused_connection) bump(counters.connections_reused, uint64_t{1});
    }
    // +1 when a connection enters the idle pool, -1 when it leaves it.
    void upstream_idle_changed(size_t upstream, size_t server, int64_t delta) {
        catch_up_with_reset();
        bump(server_counters(upstream, server).connections_idle, delta);
    }
    void upstream_failed(size_t upstream, size_t server, UpstreamError kind) {
        catch_up_with_reset();
        bump(server_counters(upstream, server).errors[static_cast<size_t>(kind)], uint64_t{1});
    }
    void upstream_retried() {
        catch_up_with_reset();
        bump(totals_->upstream_retries, uint64_t{1});
    }
    // +1 when a request joins `upstream`'s queue, -1 when it leaves it.
    void upstream_queue_changed(size_t upstream, int64_t delta) {
        catch_up_with_reset();
        bump(upstream_counters(upstream).queued, delta);
    }
    // A queued request answered 503: no server had room within connect_timeout.
    void upstream_queue_timed_out(size_t upstream) {
        catch_up_with_reset();
        bump(upstream_counters(upstream).queue_timeouts, uint64_t{1});
    }

private:
    friend class SharedCounters;
    // The slot entries of the config's names, resolved once.
    struct Entries {
        std::vector<uint32_t> locations;     // no_location_name, then Config::locations
        std::vector<uint32_t> upstreams;     // Config::upstreams index -> entry
        std::vector<uint32_t> first_server;  // Config::upstreams index -> into servers
        std::vector<uint32_t> servers;       // -> entry
        std::vector<uint32_t> first_limit;   // Config::locations index -> into limits
        std::vector<uint32_t> limits;        // -> entry
    };
    WorkerCounters(const Region& region, unsigned slot, Entries entries);

    // A reset (from any process) only bumps the region's epoch; the owner
    // zeroes its own slot the next time it records, so the slot keeps a
    // single writer. One relaxed load of a line that is nearly never written.
    void catch_up_with_reset() {
        if (region_epoch_->load(std::memory_order_relaxed) != seen_epoch_) [[unlikely]]
            start_over();
    }
    void start_over();

    ServerCounters& server_counters(size_t upstream, size_t server) {
        return servers_[entries_.servers[entries_.first_server[upstream] + server]];
    }
    UpstreamCounters& upstream_counters(size_t upstream) {
        return upstreams_[entries_.upstreams[upstream]];
    }

    const std::atomic<uint64_t>* region_epoch_;
    uint64_t seen_epoch_;
    SlotTotals* totals_;
    LocationCounters* locations_;
    ServerCounters* servers_;
    UpstreamCounters* upstreams_;
    LimitCounters* limits_;
    Capacity capacity_;
    Entries entries_;
};

}  // namespace portico::metrics
