#include "proxy/upstream.hpp"

#include <netinet/in.h>

#include <algorithm>
#include <cstring>

#include "core/log.hpp"
#include "proxy/server_resolver.hpp"

namespace portico::proxy {

namespace {

// ip_hash keys on the client's address (the first three bytes of IPv4, as
// nginx does, so one NATed network stays on one server; all of IPv6's /64).
uint32_t client_hash(const http::PeerAddress& client) {
    const unsigned char* bytes = nullptr;
    size_t length = 0;
    if (client.any.sa_family == AF_INET) {
        bytes = reinterpret_cast<const unsigned char*>(&client.v4.sin_addr);
        length = 3;
    } else if (client.any.sa_family == AF_INET6) {
        bytes = reinterpret_cast<const unsigned char*>(&client.v6.sin6_addr);
        length = 8;
    }
    uint32_t hash = 89;
    for (size_t i = 0; i < length; ++i) hash = (hash * 113 + bytes[i]) % 6271;
    return hash;
}

// The server of `entry` at `address` out of `servers` (its slot left
// empty), or nullptr.
std::unique_ptr<UpstreamServer> take_server(std::vector<std::unique_ptr<UpstreamServer>>& servers,
                                            size_t entry, const http::PeerAddress& address) {
    for (auto& server : servers)
        if (server && server->index == entry &&
            http::compare_addresses(server->address, address) == 0)
            return std::move(server);
    return nullptr;
}

// The host of a `servers` entry, for TLS: "api.internal" of
// "api.internal:8443", "::1" of "[::1]:8443"; a Unix socket has none, so
// its certificate is checked for "localhost" (the Host nginx sends it).
std::string host_of(const config::SocketAddress& entry) {
    if (entry.storage.ss_family == AF_UNIX) return "localhost";
    std::string_view text = entry.text;
    text = text.substr(0, text.rfind(':'));
    if (text.size() >= 2 && text.front() == '[' && text.back() == ']')
        text = text.substr(1, text.size() - 2);
    return std::string(text);
}

}  // namespace

Upstream::Upstream(core::IoPoller& poller, const config::UpstreamConfig& config, size_t index,
                   metrics::WorkerCounters& counters, const tls::UpstreamTls* tls)
    : loop_(poller.loop()),
      config_(config),
      inline_(config.name.starts_with("http://") || config.name.starts_with("https://")),
      index_(index),
      counters_(counters),
      tls_(tls) {
    bool names_to_resolve = false;
    for (size_t entry = 0; entry < config.servers.size(); ++entry) {
        const config::SocketAddress& server = config.servers[entry];
        if (server.resolved_by_workers()) {
            names_to_resolve = true;
            continue;
        }
        http::PeerAddress address{};
        std::memcpy(&address, &server.storage, std::min<size_t>(server.length, sizeof address));
        servers_.push_back(make_server(entry, address));
    }
    wait_timer_.init(poller, this, on_wait_timer);
    if (names_to_resolve) resolver_ = std::make_unique<ServerResolver>(loop_, *this);
}

Upstream::~Upstream() { close_idle(); }

std::unique_ptr<UpstreamServer> Upstream::make_server(size_t entry,
                                                     const http::PeerAddress& address) {
    auto server = std::make_unique<UpstreamServer>();
    server->entry = &config_.servers[entry];
    server->index = entry;
    server->address = address;
    server->name = server->entry->resolved_by_workers()
                       ? server->entry->text + " (" + http::format_ip_and_port(address) + ")"
                       : server->entry->text;
    server->serial = next_serial_++;
    if (tls_) {
        server->tls = tls_;
        server->tls_name = tls_->name_for(host_of(*server->entry));
    }
    return server;
}

bool Upstream::usable(const UpstreamServer& server, uint64_t now) const {
    return server.down_until_ms <= now;
}

size_t Upstream::soonest_back_if_all_down(const TriedServers& tried, uint64_t now) const {
    size_t soonest = servers_.size();
    for (size_t i = 0; i < servers_.size(); ++i) {
        const UpstreamServer& server = *servers_[i];
        if (usable(server, now)) return servers_.size();
        if (tried.contains(&server)) continue;
        if (soonest == servers_.size() || server.down_until_ms < servers_[soonest]->down_until_ms)
            soonest = i;
    }
    return soonest;
}

bool Upstream::has_room(const UpstreamServer& server) const {
    return config_.max_connections == 0 || server.idle_count > 0 ||
           server.open_connections < config_.max_connections;
}

UpstreamServer* Upstream::pick(const http::PeerAddress& client, const TriedServers& tried, bool& busy) {
    busy = false;
    if (servers_.empty()) {
        busy = awaiting_addresses();
        return nullptr;
    }
    if (tried.full()) return nullptr;
    uint64_t now = uv_now(loop_);
    // Every server down: rather than a 502 without a try, the one whose
    // down period ends first (an app restart takes a few seconds, not
    // fail_timeout). If it fails again, the next one.
    if (size_t back = soonest_back_if_all_down(tried, now); back < servers_.size()) {
        UpstreamServer& server = *servers_[back];
        if (!has_room(server)) {
            busy = true;
            return nullptr;
        }
        if (!all_down_warned_) {
            log::warn(
                "upstream '{}': every server is marked down; trying {} anyway, the first "
                "to come back (logged once until a server answers)",
                config_.name, server.name);
            all_down_warned_ = true;
        }
        return &server;
    }
    return pick_by_balance(client, tried, now, busy);
}

UpstreamServer* Upstream::pick_by_balance(const http::PeerAddress& client,
                                          const TriedServers& tried, uint64_t now, bool& busy) {
    auto available = [&](UpstreamServer& server) {
        if (!usable(server, now) || tried.contains(&server)) return false;
        if (has_room(server)) return true;
        busy = true;
        return false;
    };
    size_t count = servers_.size();
    switch (config_.balance) {
    case config::Balance::round_robin:
        for (size_t i = 0; i < count; ++i) {
            UpstreamServer& server = *servers_[(next_round_robin_ + i) % count];
            if (!available(server)) continue;
            next_round_robin_ = (next_round_robin_ + i + 1) % count;
            return &server;
        }
        return nullptr;
    case config::Balance::least_conn: {
        UpstreamServer* best = nullptr;
        // Ties go round robin, so equal servers share the load.
        for (size_t i = 0; i < count; ++i) {
            UpstreamServer& server = *servers_[(next_round_robin_ + i) % count];
            if (available(server) && (!best || server.active_requests < best->active_requests))
                best = &server;
        }
        next_round_robin_ = (next_round_robin_ + 1) % count;
        return best;
    }
    case config::Balance::ip_hash: {
        // The same client goes to the same server while it is up; when it is
        // down, the next one in order.
        size_t start = client_hash(client) % count;
        for (size_t i = 0; i < count; ++i) {
            UpstreamServer& server = *servers_[(start + i) % count];
            if (available(server)) return &server;
        }
        return nullptr;
    }
    }
    return nullptr;
}

void Upstream::report_failure(UpstreamServer& server, metrics::UpstreamError kind) {
    counters_.upstream_failed(index_, server.index, kind);
    // max_fails = 0 turns passive health off. A lone server is never marked
    // down (nginx ignores max_fails there): one slow request or one restart
    // would otherwise refuse everyone for fail_timeout.
    if (config_.max_fails == 0 || servers_.size() == 1) return;
    uint64_t now = uv_now(loop_);
    uint64_t window = static_cast<uint64_t>(config_.fail_timeout.count());
    if (server.recent_failures == 0 || now - server.first_failure_ms > window) {
        server.recent_failures = 0;
        server.first_failure_ms = now;
    }
    if (++server.recent_failures >= config_.max_fails) {
        server.down_until_ms = now + window;
        server.recent_failures = 0;
        log::warn("upstream '{}' server {} marked down for {} ms after {} failure(s)", config_.name,
                  server.name, window, config_.max_fails);
    }
}

void Upstream::report_success(UpstreamServer& server) {
    server.recent_failures = 0;
    // It answered: up, even when it was tried while marked down.
    server.down_until_ms = 0;
    all_down_warned_ = false;
}

UpstreamConnection* Upstream::take_idle(UpstreamServer& server) {
    UpstreamConnection* connection = server.idle_head;
    if (connection == nullptr) return nullptr;
    unlink_idle(*connection);
    connection->stop_timer();
    // Still watched for readability: the taker becomes the owner within
    // this same call, so epoll is not touched per request.
    return connection;
}

void Upstream::put_idle(UpstreamConnection* connection) {
    UpstreamServer& server = connection->server();
    // Watched while idle: the upstream closing it (or sending anything) takes
    // it out of the pool at once, so no request is written into a dead one.
    if (draining_ || server.removed || server.idle_count >= config_.keepalive ||
        connection->keep_alive_ms == 0 ||
        !connection->watch(this, core::io_readable)) {
        connection->close();
        return;
    }
    connection->idle_prev = nullptr;
    connection->idle_next = server.idle_head;
    if (server.idle_head) server.idle_head->idle_prev = connection;
    server.idle_head = connection;
    ++server.idle_count;
    counters_.upstream_idle_changed(index_, server.index, 1);
    connection->arm_timer(connection->keep_alive_ms);
}

void Upstream::unlink_idle(UpstreamConnection& connection) {
    UpstreamServer& server = connection.server();
    if (connection.idle_prev) connection.idle_prev->idle_next = connection.idle_next;
    else server.idle_head = connection.idle_next;
    if (connection.idle_next) connection.idle_next->idle_prev = connection.idle_prev;
    connection.idle_next = connection.idle_prev = nullptr;
    --server.idle_count;
    counters_.upstream_idle_changed(index_, server.index, -1);
}

void Upstream::on_upstream_event(UpstreamConnection& connection, int) {
    unlink_idle(connection);
    connection.close();
    wake_waiters();
}

void Upstream::on_upstream_timeout(UpstreamConnection& connection) {
    unlink_idle(connection);
    connection.close();
    wake_waiters();
}

// ---- the queue of requests waiting for room ------------------------------

void Upstream::wait_for_room(UpstreamWaiter& waiter) {
    if (waiter.waiting_) return;
    waiter.waiting_ = true;
    counters_.upstream_queue_changed(index_, 1);
    if (waiter.wait_deadline_ms_ == 0)
        waiter.wait_deadline_ms_ = uv_now(loop_) + static_cast<uint64_t>(config_.connect_timeout.count());
    // By deadline, so by arrival: a newcomer goes last, one that waited
    // before back to its place.
    UpstreamWaiter* after = waiting_tail_;
    while (after && after->wait_deadline_ms_ > waiter.wait_deadline_ms_) after = after->wait_prev_;
    waiter.wait_prev_ = after;
    waiter.wait_next_ = after ? after->wait_next_ : waiting_head_;
    if (waiter.wait_next_) waiter.wait_next_->wait_prev_ = &waiter;
    else waiting_tail_ = &waiter;
    if (after) after->wait_next_ = &waiter;
    else waiting_head_ = &waiter;
    arm_wait_timer();
}

void Upstream::cancel_wait(UpstreamWaiter& waiter) {
    if (waiter.waiting_) unlink_waiter(waiter);
}

void Upstream::unlink_waiter(UpstreamWaiter& waiter) {
    if (waiter.wait_prev_) waiter.wait_prev_->wait_next_ = waiter.wait_next_;
    else waiting_head_ = waiter.wait_next_;
    if (waiter.wait_next_) waiter.wait_next_->wait_prev_ = waiter.wait_prev_;
    else waiting_tail_ = waiter.wait_prev_;
    waiter.wait_next_ = waiter.wait_prev_ = nullptr;
    waiter.waiting_ = false;
    counters_.upstream_queue_changed(index_, -1);
}

// The same choice as pick(): when every server is down, only the one back
// first counts. Without any server, the waiters go on (to fail) once no
// first lookup is left to wait for.
bool Upstream::any_room() const {
    if (servers_.empty()) return !awaiting_addresses();
    uint64_t now = uv_now(loop_);
    if (size_t back = soonest_back_if_all_down(TriedServers{}, now); back < servers_.size())
        return has_room(*servers_[back]);
    for (const auto& server : servers_)
        if (usable(*server, now) && has_room(*server)) return true;
    return false;
}

void Upstream::wake_waiters() {
    uint64_t round = ++wake_round_;
    // From the head every time: on_room() may run other exchanges, which
    // may change the queue.
    for (;;) {
        UpstreamWaiter* waiter = waiting_head_;
        while (waiter && waiter->woken_round_ == round) waiter = waiter->wait_next_;
        if (waiter == nullptr || !any_room()) return;
        waiter->woken_round_ = round;
        unlink_waiter(*waiter);
        waiter->on_room();
    }
}

// Deadlines grow along the queue (connect_timeout after each arrival): the
// timer only ever needs the first one's.
void Upstream::arm_wait_timer() {
    if (waiting_head_ == nullptr) return;
    uint64_t now = uv_now(loop_);
    uint64_t deadline = waiting_head_->wait_deadline_ms_;
    wait_timer_.arm(deadline > now ? deadline - now : 0);
}

void Upstream::on_wait_timer(void* self) {
    auto* upstream = static_cast<Upstream*>(self);
    uint64_t now = uv_now(upstream->loop_);
    while (UpstreamWaiter* waiter = upstream->waiting_head_) {
        if (waiter->wait_deadline_ms_ > now) break;
        upstream->unlink_waiter(*waiter);
        waiter->on_wait_timeout();
    }
    upstream->arm_wait_timer();
}

void Upstream::close() {
    wait_timer_.cancel();
    if (resolver_) resolver_->close();
}

void Upstream::close_idle() {
    draining_ = true;
    for (auto& server : servers_) close_idle_of(*server);
}

void Upstream::close_idle_of(UpstreamServer& server) {
    while (UpstreamConnection* connection = server.idle_head) {
        unlink_idle(*connection);
        connection->close();
    }
}

// ---- servers that come and go with a name's addresses --------------------

bool Upstream::awaiting_addresses() const {
    return servers_.empty() && resolver_ && resolver_->awaiting_first_answer();
}

void Upstream::set_addresses(size_t entry, const std::vector<http::PeerAddress>& addresses) {
    // The entry's servers until now leave the list; the others keep their
    // places.
    std::vector<std::unique_ptr<UpstreamServer>> previous;
    for (auto& server : servers_)
        if (server->index == entry) previous.push_back(std::move(server));
    std::erase(servers_, nullptr);
    // Each address gets back the server it had (pool, health and all), or
    // one still draining, or a new one.
    std::vector<std::unique_ptr<UpstreamServer>> current;
    for (const http::PeerAddress& address : addresses) {
        std::unique_ptr<UpstreamServer> server = take_server(previous, entry, address);
        if (!server) server = take_server(drained_, entry, address);
        if (!server) server = make_server(entry, address);
        server->removed = false;
        current.push_back(std::move(server));
    }
    std::erase(drained_, nullptr);
    for (auto& server : previous)
        if (server) drain_server(std::move(server));
    // In `servers` order: before the next entries' servers.
    auto next_entries = std::find_if(servers_.begin(), servers_.end(),
                                     [entry](const auto& server) { return server->index > entry; });
    servers_.insert(next_entries, std::make_move_iterator(current.begin()),
                    std::make_move_iterator(current.end()));
    wake_waiters();
}

// In-flight requests keep their connections to it; idle ones go now, and
// those in use are closed as they come back (put_idle).
void Upstream::drain_server(std::unique_ptr<UpstreamServer> server) {
    server->removed = true;
    close_idle_of(*server);
    drained_.push_back(std::move(server));
}

void Upstream::free_drained_servers() {
    std::erase_if(drained_, [](const std::unique_ptr<UpstreamServer>& server) {
        return server->open_connections == 0;
    });
}

}  // namespace portico::proxy
