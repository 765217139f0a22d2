// The layout of the shared counters region: one anonymous MAP_SHARED mapping
// the master creates before its first fork, so every worker (and whoever
// serves /metrics) sees the same bytes at the same address.
//
//   RegionHeader            reset epoch, directory sizes, the master's totals
//   SlotInfo[slots]         who holds each worker slot (the master writes it)
//   NameRef[locations]      the directory: entry i names the i-th
//   ServerName[servers]     LocationCounters / ServerCounters /
//   NameRef[upstreams]      UpstreamCounters / LimitCounters of every slot
//   LimitName[limits]
//   char[name_bytes]        the directory's strings
//   slots x { SlotTotals, LocationCounters[locations + 1], ServerCounters[servers + 1],
//             UpstreamCounters[upstreams + 1], LimitCounters[limits + 1] }
//
// The directory is keyed by location name, by (upstream name, server
// address), by upstream name and by (location name, limit name), and only
// ever grows, so a reload that keeps
// a name keeps its entry, and its totals. Location entry 0 is always
// no_location_name. The extra entry at the end of each table of a slot is a
// sink for names that found no room; it is written but never read.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string_view>

#include "config/coding.hpp"
#include "metrics/histogram.hpp"
#include "metrics/status_codes.hpp"

namespace portico::metrics {

// The pseudo-location of requests answered without one: no location
// matched, or the connection answered before routing (a malformed or
// oversized head, a head or body too slow, a body too large). nginx logs
// such requests with "-" too.
inline constexpr std::string_view no_location_name = "-";

// tls: the handshake with a `tls` upstream failed (its certificate, most often).
enum class UpstreamError : uint8_t { connect, timeout, reset, bad_response, tls };
inline constexpr std::array<std::string_view, 5> upstream_error_names = {
    "connect", "timeout", "reset", "bad_response", "tls"};

// How a TLS handshake ended: a new session, a resumed one (ticket), or none.
enum class TlsHandshake : uint8_t { full, resumed, failed };
inline constexpr std::array<std::string_view, 3> tls_handshake_names = {"full", "resumed", "failed"};

// Why a connection to a proxy_protocol listener was closed before its
// PROXY header was complete: not a header, no header within header_timeout,
// or the client closed in the middle of it.
enum class ProxyProtocolError : uint8_t { invalid, timeout, truncated };
inline constexpr std::array<std::string_view, 3> proxy_protocol_error_names = {"invalid", "timeout",
                                                                               "truncated"};

// Why a request was refused access (portico_access_denied_total's reason):
// its address by allow/deny, or Basic auth.
enum class AccessDenial : uint8_t { address, auth };
inline constexpr std::array<std::string_view, 2> access_denial_names = {"address", "auth"};

// What the response cache did with a request (portico_cache_requests_total's
// result; cache/cache_result.hpp).
enum class CacheResult : uint8_t { hit, miss, expired, stale, updating, bypass };
inline constexpr std::array<std::string_view, 6> cache_result_names = {
    "hit", "miss", "expired", "stale", "updating", "bypass"};

// Cache-line aligned so two entries never share a line with another slot's.
struct alignas(64) LocationCounters {
    std::array<std::atomic<uint64_t>, status_slot_count> responses{};
    std::array<std::atomic<uint64_t>, access_denial_names.size()>
        access_denied{};  // by AccessDenial
    std::array<std::atomic<uint64_t>, cache_result_names.size()> cache{};  // by CacheResult
    std::atomic<uint64_t> response_bytes{0};
    std::atomic<uint64_t> sendfile_bytes{0};
    HistogramSlot request_duration;
    HistogramSlot upstream_duration;
    HistogramSlot proxy_overhead;

    void clear();
};

struct alignas(64) ServerCounters {
    std::atomic<uint64_t> requests{0};
    std::atomic<uint64_t> connections_opened{0};
    std::atomic<uint64_t> connections_reused{0};
    std::atomic<int64_t> connections_idle{0};  // gauge: pooled right now
    std::array<std::atomic<uint64_t>, upstream_error_names.size()> errors{};
    HistogramSlot connect_time;

    void clear_totals();  // all but the gauge, which describes the present
};

// What belongs to an upstream as a whole: its queue of requests waiting
// for a server below max_connections.
struct alignas(64) UpstreamCounters {
    std::atomic<int64_t> queued{0};  // gauge: waiting right now
    std::atomic<uint64_t> queue_timeouts{0};  // answered 503 after connect_timeout in the queue

    void clear_totals();  // all but the gauge, which describes the present
};

// Requests one limit of one location refused (portico_limited_total).
struct alignas(64) LimitCounters {
    std::atomic<uint64_t> refused{0};
};

// Responses compressed on the fly in one coding: how many (and how many of
// them came from the compressed cache), and their body bytes before and after.
struct CompressionCounters {
    std::atomic<uint64_t> responses{0};
    std::atomic<uint64_t> cache_hits{0};
    std::atomic<uint64_t> bytes_in{0};
    std::atomic<uint64_t> bytes_out{0};
};

// Which side ended an HTTP/2 stream with RST_STREAM.
enum class ResetSide : uint8_t { client, server };
inline constexpr std::array<std::string_view, 2> reset_side_names = {"client", "server"};

struct Http2Counters {
    std::atomic<uint64_t> sessions{0};  // connections that spoke h2 or h2c
    std::atomic<uint64_t> streams{0};   // requests (streams opened by the client)
    std::array<std::atomic<uint64_t>, reset_side_names.size()> resets{};  // by ResetSide
    std::atomic<uint64_t> goaways_sent{0};
};

struct alignas(64) SlotTotals {
    // The reset these counters count from; readers ignore a slot whose
    // epoch is behind RegionHeader::reset_epoch (see SharedCounters::reset).
    std::atomic<uint64_t> reset_epoch{0};
    std::atomic<uint64_t> connections_accepted{0};
    std::atomic<int64_t> connections_active{0};  // gauge
    std::atomic<uint64_t> upstream_retries{0};
    std::array<std::atomic<uint64_t>, tls_handshake_names.size()> tls_handshakes{};
    HistogramSlot tls_handshake_time;  // accept to handshake done, completed ones
    std::array<CompressionCounters, config::codings_by_preference.size()> compression{};  // by Coding
    Http2Counters http2;
    std::array<std::atomic<uint64_t>, proxy_protocol_error_names.size()> proxy_protocol_errors{};
};

// Written by the master, except pid, which the worker sets when it attaches.
struct SlotInfo {
    std::atomic<uint32_t> holders{0};  // live processes writing the slot
    std::atomic<uint32_t> worker{0};   // the master's worker index that last held it
    std::atomic<int32_t> pid{0};       // of the last holder
    std::atomic<bool> built{false};    // its counters are constructed (first lease)
};

struct NameRef {
    uint32_t offset = 0;
    uint32_t length = 0;
};

struct ServerName {
    NameRef upstream;
    NameRef server;
};

// A limit as a location lists it: a [limit.NAME]'s name, or "max_concurrent".
struct LimitName {
    NameRef location;
    NameRef limit;
};

// Counters only the master writes.
struct MasterTotals {
    std::atomic<uint64_t> reset_epoch{0};
    std::atomic<uint64_t> worker_restarts{0};
    std::atomic<uint64_t> config_reloads_ok{0};
    std::atomic<uint64_t> config_reloads_failed{0};
};

struct RegionHeader {
    // On a cache line of its own: every worker reads it on every record, and
    // only a reset writes it.
    alignas(64) std::atomic<uint64_t> reset_epoch{0};
    // The directory; the master publishes entries by storing the counts
    // (release) after writing them.
    alignas(64) std::atomic<uint32_t> location_count{0};
    std::atomic<uint32_t> server_count{0};
    std::atomic<uint32_t> upstream_count{0};
    std::atomic<uint32_t> limit_count{0};
    std::atomic<uint32_t> name_bytes_used{0};
    MasterTotals master;
};

struct Capacity {
    uint32_t slots = 0;
    uint32_t locations = 0;
    uint32_t servers = 0;
    uint32_t upstreams = 0;
    uint32_t limits = 0;  // (location, limit) pairs
    uint32_t name_bytes = 0;
};

// A process's view of a mapped region: where each table starts.
class Region {
public:
    static size_t bytes_needed(const Capacity& capacity);

    // Constructs the header and directory in fresh, zeroed memory.
    static Region build(void* base, const Capacity& capacity);

    // Constructs a slot's counters; its pages are touched only from then on.
    void build_slot(unsigned slot);

    const Capacity& capacity() const { return capacity_; }
    RegionHeader& header() const { return *header_; }
    SlotInfo& slot_info(unsigned slot) const { return slot_infos_[slot]; }
    SlotTotals& totals(unsigned slot) const;
    LocationCounters* locations(unsigned slot) const;  // locations + 1 entries
    ServerCounters* servers(unsigned slot) const;      // servers + 1 entries
    UpstreamCounters* upstreams(unsigned slot) const;  // upstreams + 1 entries
    LimitCounters* limits(unsigned slot) const;        // limits + 1 entries
    NameRef* location_names() const { return location_names_; }  // capacity().locations
    ServerName* server_names() const { return server_names_; }    // capacity().servers
    NameRef* upstream_names() const { return upstream_names_; }   // capacity().upstreams
    LimitName* limit_names() const { return limit_names_; }       // capacity().limits
    char* name_bytes() const { return name_bytes_; }
    std::string_view name(NameRef ref) const { return {name_bytes_ + ref.offset, ref.length}; }

private:
    Capacity capacity_;
    RegionHeader* header_ = nullptr;
    SlotInfo* slot_infos_ = nullptr;
    NameRef* location_names_ = nullptr;
    ServerName* server_names_ = nullptr;
    NameRef* upstream_names_ = nullptr;
    LimitName* limit_names_ = nullptr;
    char* name_bytes_ = nullptr;
    char* slots_ = nullptr;
    size_t slot_stride_ = 0;
};

}  // namespace portico::metrics
