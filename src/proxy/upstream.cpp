#include "proxy/upstream.hpp"

#include <netinet/in.h>

#include <algorithm>
#include <cstring>

#include <spdlog/spdlog.h>

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

}  // namespace

Upstream::Upstream(uv_loop_t* loop, const config::UpstreamConfig& config, size_t index,
                   metrics::WorkerCounters& counters)
    : loop_(loop), config_(config), index_(index), counters_(counters), servers_(config.servers.size()) {
    for (size_t i = 0; i < servers_.size(); ++i) {
        servers_[i].address = &config.servers[i];
        servers_[i].upstream = &config;
        servers_[i].index = i;
    }
    wait_timer_.init(loop, this, on_wait_timer);
}

Upstream::~Upstream() { close_idle(); }

bool Upstream::usable(const UpstreamServer& server, uint64_t now) const {
    return config_.max_fails == 0 || server.down_until_ms <= now;
}

bool Upstream::has_room(const UpstreamServer& server) const {
    return config_.max_connections == 0 || server.idle_count > 0 ||
           server.open_connections < config_.max_connections;
}

UpstreamServer* Upstream::pick(const http::PeerAddress& client, const TriedServers& tried, bool& busy) {
    busy = false;
    if (tried.full()) return nullptr;
    uint64_t now = uv_now(loop_);
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
            UpstreamServer& server = servers_[(next_round_robin_ + i) % count];
            if (!available(server)) continue;
            next_round_robin_ = (next_round_robin_ + i + 1) % count;
            return &server;
        }
        return nullptr;
    case config::Balance::least_conn: {
        UpstreamServer* best = nullptr;
        // Ties go round robin, so equal servers share the load.
        for (size_t i = 0; i < count; ++i) {
            UpstreamServer& server = servers_[(next_round_robin_ + i) % count];
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
            UpstreamServer& server = servers_[(start + i) % count];
            if (available(server)) return &server;
        }
        return nullptr;
    }
    }
    return nullptr;
}

void Upstream::report_failure(UpstreamServer& server, metrics::UpstreamError kind) {
    counters_.upstream_failed(index_, server.index, kind);
    if (config_.max_fails == 0) return;
    uint64_t now = uv_now(loop_);
    uint64_t window = static_cast<uint64_t>(config_.fail_timeout.count());
    if (server.recent_failures == 0 || now - server.first_failure_ms > window) {
        server.recent_failures = 0;
        server.first_failure_ms = now;
    }
    if (++server.recent_failures >= config_.max_fails) {
        server.down_until_ms = now + window;
        server.recent_failures = 0;
        spdlog::warn("upstream '{}' server {} marked down for {} ms after {} failure(s)",
                     config_.name, server.address->text, window, config_.max_fails);
    }
}

void Upstream::report_success(UpstreamServer& server) { server.recent_failures = 0; }

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
    if (draining_ || server.idle_count >= config_.keepalive || connection->keep_alive_ms == 0 ||
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
}

bool Upstream::any_room() const {
    uint64_t now = uv_now(loop_);
    for (const UpstreamServer& server : servers_)
        if (usable(server, now) && has_room(server)) return true;
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

void Upstream::close() { uv_close(wait_timer_.handle(), nullptr); }

void Upstream::close_idle() {
    draining_ = true;
    for (UpstreamServer& server : servers_)
        while (UpstreamConnection* connection = server.idle_head) {
            unlink_idle(*connection);
            connection->close();
        }
}

}  // namespace portico::proxy
