// An [upstream.NAME] as one worker sees it: its servers (with `resolve`,
// following the addresses of their host names), their passive health, the
// balancer that picks one, and each server's pool of idle kept-alive
// connections.
#pragma once

#include <sys/socket.h>
#include <uv.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "core/lazy_timer.hpp"
#include "core/log_throttle.hpp"
#include "http/exchange.hpp"
#include "http/peer_address.hpp"
#include "metrics/worker_counters.hpp"
#include "proxy/upstream_connection.hpp"
#include "tls/upstream_tls.hpp"

namespace portico::proxy {

class ServerResolver;

struct UpstreamServer {
    // The `servers` entry it comes from. Its text is an inline upstream's
    // Host header (Upstream::host_header), and its counters are the entry's: the addresses
    // a name resolves to come and go, while the shared counters' directory
    // is fixed at load (see metrics/shared_counters.hpp).
    const config::SocketAddress* entry = nullptr;
    size_t index = 0;             // of `entry` in its upstream's servers, for the counters
    http::PeerAddress address{};  // where to connect
    std::string name;             // for logs: the entry, with the address when a worker resolved it
    // Unique in its upstream, so TriedServers never mistakes a newer server
    // for a freed one that had the same memory.
    uint64_t serial = 0;
    // Its name no longer resolves to it: no new requests; freed once its
    // last connection closed.
    bool removed = false;
    // Passive health (max_fails within fail_timeout: down for fail_timeout).
    uint32_t recent_failures = 0;
    uint64_t first_failure_ms = 0;
    uint64_t down_until_ms = 0;
    // least_conn's measure: requests being answered by it now.
    uint32_t active_requests = 0;
    uint32_t open_connections = 0;  // open or opening, idle ones included
    core::LogThrottle failure_log;  // its failures: a line a second at most
    // Idle pool: a doubly linked list, most recently used first.
    UpstreamConnection* idle_head = nullptr;
    uint32_t idle_count = 0;
    // An upstream with `tls`: its context, the name its certificate must
    // have (and SNI), and the session its next connection resumes.
    const tls::UpstreamTls* tls = nullptr;
    std::string tls_name;
    tls::CachedSession session;

    // servers = ["unix:/path"]: connected to at the entry's own address
    // (`address` has no room for a sockaddr_un, and the entry never resolves).
    bool on_unix_socket() const { return entry->storage.ss_family == AF_UNIX; }
};

// The servers one request has tried, in a fixed array: no allocation per
// request. A request gives up after this many servers.
struct TriedServers {
    static constexpr size_t capacity = 8;
    uint64_t serials[capacity] = {};
    size_t count = 0;
    bool empty() const { return count == 0; }
    bool full() const { return count == capacity; }
    bool contains(const UpstreamServer* server) const {
        for (size_t i = 0; i < count; ++i)
            if (serials[i] == server->serial) return true;
        return false;
    }
    void add(const UpstreamServer* server) {
        if (count < capacity) serials[count++] = server->serial;
    }
};

// A request waiting for a server with room (every one it may use is at
// max_connections), in the upstream's first-come first-served queue.
class UpstreamWaiter {
public:
    // A connection was given back or closed: try again.
    virtual void on_room() = 0;
    // connect_timeout passed in the queue.
    virtual void on_wait_timeout() = 0;

protected:
    ~UpstreamWaiter() = default;

private:
    friend class Upstream;
    UpstreamWaiter* wait_next_ = nullptr;
    UpstreamWaiter* wait_prev_ = nullptr;
    uint64_t wait_deadline_ms_ = 0;  // 0 until it first waits
    uint64_t woken_round_ = 0;       // the wake_waiters() call that last tried it
    bool waiting_ = false;
};

class Upstream final : private UpstreamConnection::Owner {
public:
    // `index`: this upstream's place in Config::upstreams, for the counters.
    // `tls`: its context when it has `tls` (loaded by the master), else nullptr.
    Upstream(core::IoPoller& poller, const config::UpstreamConfig& config, size_t index,
             metrics::WorkerCounters& counters, const tls::UpstreamTls* tls = nullptr);
    ~Upstream();
    Upstream(const Upstream&) = delete;
    Upstream& operator=(const Upstream&) = delete;

    const config::UpstreamConfig& config() const { return config_; }
    size_t index() const { return index_; }
    // The Host header when the client's is not sent (preserve_host = false,
    // or a request without one), as nginx's $proxy_host: a named upstream's
    // name; for an inline `proxy = "http://host:port"`, its host:port.
    std::string_view host_header(const UpstreamServer& server) const {
        return inline_ ? std::string_view(server.entry->text) : std::string_view(config_.name);
    }
    metrics::WorkerCounters& counters() { return counters_; }

    // The server for a new request, by the configured balance, skipping
    // servers marked down, those in `tried` and those at max_connections;
    // nullptr when none is left, with `busy` set when some were only full,
    // or when there is no server yet and the first lookups are under way.
    // When every server is marked down, the untried one back first.
    UpstreamServer* pick(const http::PeerAddress& client, const TriedServers& tried, bool& busy);

    // Queues a request until a server has room, or connect_timeout passes.
    // One that waited before (woken, but it could not use the room) keeps
    // its place by its first deadline.
    void wait_for_room(UpstreamWaiter& waiter);
    void cancel_wait(UpstreamWaiter& waiter);
    // A connection was given back or closed: waiters try again, oldest
    // first, while a server has room, each at most once per call (one may be
    // unable to use it: the free server is one it already failed on).
    void wake_waiters();
    // At worker exit, after the last request: frees the queue's timer and
    // stops looking names up.
    void close();

    // The addresses the `servers` entry `entry` (a host name) resolves to
    // now, sorted, without duplicates, never empty: new ones become servers,
    // those gone are drained (no new requests, idle connections closed,
    // in-flight requests finish). Waiters try again.
    void set_addresses(size_t entry, const std::vector<http::PeerAddress>& addresses);
    // Frees the drained servers whose last connection has closed. Called
    // from the loop, never under an exchange that may still hold one.
    void free_drained_servers();
    // No server yet, and a name's first lookup is still under way: requests
    // wait for it in the queue rather than fail.
    bool awaiting_addresses() const;

    void report_failure(UpstreamServer& server, metrics::UpstreamError kind);
    void report_success(UpstreamServer& server);

    // A kept-alive connection to `server` that is still open, or nullptr.
    UpstreamConnection* take_idle(UpstreamServer& server);
    // Back to the pool after a complete, well-framed exchange (the caller
    // checked that with can_reuse); closed instead when the pool is full.
    void put_idle(UpstreamConnection* connection);
    // Worker drain: idle connections go at once, and later ones are not kept.
    void close_idle();

private:
    void on_upstream_event(UpstreamConnection& connection, int events) override;
    void on_upstream_timeout(UpstreamConnection& connection) override;
    void unlink_idle(UpstreamConnection& connection);
    UpstreamServer* pick_by_balance(const http::PeerAddress& client, const TriedServers& tried,
                                    uint64_t now, bool& busy);
    bool usable(const UpstreamServer& server, uint64_t now) const;
    // When no server is up: the index of the one not in `tried` whose down
    // period ends first. Otherwise (or all tried) servers_.size().
    size_t soonest_back_if_all_down(const TriedServers& tried, uint64_t now) const;
    bool has_room(const UpstreamServer& server) const;
    std::unique_ptr<UpstreamServer> make_server(size_t entry, const http::PeerAddress& address);
    void drain_server(std::unique_ptr<UpstreamServer> server);
    void close_idle_of(UpstreamServer& server);
    bool any_room() const;
    void unlink_waiter(UpstreamWaiter& waiter);
    void arm_wait_timer();
    static void on_wait_timer(void* upstream);

    uv_loop_t* loop_;
    const config::UpstreamConfig& config_;
    // An inline upstream is named by its URL (config::UpstreamConfig::name).
    const bool inline_;
    size_t index_;
    metrics::WorkerCounters& counters_;
    const tls::UpstreamTls* tls_;
    // The balancer's servers: in `servers` order, a name's addresses sorted,
    // so every worker sees the same order (ip_hash sends a client to the
    // same server whichever worker accepted it).
    std::vector<std::unique_ptr<UpstreamServer>> servers_;
    std::vector<std::unique_ptr<UpstreamServer>> drained_;  // removed, connections still open
    uint64_t next_serial_ = 1;
    size_t next_round_robin_ = 0;
    bool all_down_warned_ = false;  // since a server last answered
    bool draining_ = false;
    UpstreamWaiter* waiting_head_ = nullptr;
    UpstreamWaiter* waiting_tail_ = nullptr;
    uint64_t wake_round_ = 0;
    core::LazyTimer wait_timer_;
    std::unique_ptr<ServerResolver> resolver_;  // when a server is a name to resolve again
};

}  // namespace portico::proxy
