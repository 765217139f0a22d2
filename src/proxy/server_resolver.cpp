#include "proxy/server_resolver.hpp"

#include <netdb.h>

#include <algorithm>
#include <cstring>

#include "core/log.hpp"
#include "proxy/upstream.hpp"

namespace portico::proxy {

namespace {

std::string describe(const std::vector<http::PeerAddress>& addresses) {
    if (addresses.empty()) return "none";
    std::string text;
    for (const http::PeerAddress& address : addresses)
        text += (text.empty() ? "" : ", ") + http::format_ip_and_port(address);
    return text;
}

// Sorted and without duplicates (a name listed twice in /etc/hosts), so
// that two answers compare equal when they hold the same addresses, and
// every worker orders its servers alike.
std::vector<http::PeerAddress> addresses_of(const addrinfo* found) {
    std::vector<http::PeerAddress> addresses;
    for (const addrinfo* info = found; info; info = info->ai_next) {
        if (info->ai_family != AF_INET && info->ai_family != AF_INET6) continue;
        http::PeerAddress address{};
        std::memcpy(&address, info->ai_addr, std::min<size_t>(info->ai_addrlen, sizeof address));
        addresses.push_back(address);
    }
    auto less = [](const http::PeerAddress& a, const http::PeerAddress& b) {
        return http::compare_addresses(a, b) < 0;
    };
    auto same = [](const http::PeerAddress& a, const http::PeerAddress& b) {
        return http::compare_addresses(a, b) == 0;
    };
    std::sort(addresses.begin(), addresses.end(), less);
    addresses.erase(std::unique(addresses.begin(), addresses.end(), same), addresses.end());
    return addresses;
}

bool same_addresses(const std::vector<http::PeerAddress>& a,
                    const std::vector<http::PeerAddress>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                      [](const http::PeerAddress& x, const http::PeerAddress& y) {
                          return http::compare_addresses(x, y) == 0;
                      });
}

}  // namespace

ServerResolver::ServerResolver(uv_loop_t* loop, Upstream& upstream)
    : upstream_(upstream), loop_(loop) {
    const config::UpstreamConfig& config = upstream.config();
    for (size_t entry = 0; entry < config.servers.size(); ++entry) {
        if (!config.servers[entry].resolved_by_workers()) continue;
        auto lookup = std::make_unique<Lookup>();
        lookup->request.data = lookup.get();
        lookup->resolver = this;
        lookup->entry = entry;
        lookups_.push_back(std::move(lookup));
    }
    uv_timer_init(loop, &timer_);
    timer_.data = this;
    auto interval = static_cast<uint64_t>(config.resolve.count());
    uv_timer_start(&timer_, on_timer, interval, interval);
    start_lookups();
}

void ServerResolver::close() {
    if (closed_) return;
    closed_ = true;
    uv_close(reinterpret_cast<uv_handle_t*>(&timer_), nullptr);
    // Only a lookup still queued for a thread can be cancelled; its
    // callback then comes with UV_EAI_CANCELED.
    for (auto& lookup : lookups_)
        if (lookup->pending) uv_cancel(reinterpret_cast<uv_req_t*>(&lookup->request));
}

bool ServerResolver::awaiting_first_answer() const {
    return std::any_of(lookups_.begin(), lookups_.end(),
                       [](const std::unique_ptr<Lookup>& lookup) { return !lookup->answered; });
}

void ServerResolver::on_timer(uv_timer_t* timer) {
    auto* resolver = static_cast<ServerResolver*>(timer->data);
    // Once per interval, in a loop turn no exchange is in: servers drained
    // since the last tick whose connections are all closed can go.
    resolver->upstream_.free_drained_servers();
    resolver->start_lookups();
}

// A lookup slower than the interval is not doubled: the next starts after
// its answer, at the next tick.
void ServerResolver::start_lookups() {
    for (auto& lookup : lookups_)
        if (!lookup->pending) start(*lookup);
}

void ServerResolver::start(Lookup& lookup) {
    const config::SocketAddress& server = upstream_.config().servers[lookup.entry];
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    std::string port = std::to_string(server.port);
    int rc = uv_getaddrinfo(loop_, &lookup.request, on_lookup_done, server.host.c_str(),
                            port.c_str(), &hints);
    if (rc != 0) {
        on_failure(lookup, uv_strerror(rc));
        return;
    }
    lookup.pending = true;
}

void ServerResolver::on_lookup_done(uv_getaddrinfo_t* request, int status, addrinfo* found) {
    auto* lookup = static_cast<Lookup*>(request->data);
    lookup->resolver->on_answer(*lookup, status, found);
    uv_freeaddrinfo(found);
}

void ServerResolver::on_answer(Lookup& lookup, int status, addrinfo* found) {
    lookup.pending = false;
    if (closed_) return;
    std::vector<http::PeerAddress> addresses =
        status == 0 ? addresses_of(found) : std::vector<http::PeerAddress>{};
    if (status == 0 && !addresses.empty()) {
        on_addresses(lookup, std::move(addresses));
    } else {
        on_failure(lookup, status == 0 ? "no IPv4 or IPv6 address" : uv_strerror(status));
    }
}

void ServerResolver::on_addresses(Lookup& lookup, std::vector<http::PeerAddress> addresses) {
    const std::string& name = upstream_.config().servers[lookup.entry].text;
    lookup.answered = true;
    if (!lookup.failure.empty())
        log::info("upstream '{}' server {}: the name resolves again", upstream_.config().name,
                  name);
    lookup.failure.clear();
    if (same_addresses(addresses, lookup.addresses)) return;
    log::info("upstream '{}' server {} resolves to {} (was {})", upstream_.config().name, name,
              describe(addresses), describe(lookup.addresses));
    lookup.addresses = std::move(addresses);
    upstream_.set_addresses(lookup.entry, lookup.addresses);
}

// DNS down, or the name gone for a moment (a headless Service between two
// rollouts): the last good addresses keep serving. Logged once until the
// reason changes or the name resolves again.
void ServerResolver::on_failure(Lookup& lookup, const char* why) {
    bool first_answer = !lookup.answered;
    lookup.answered = true;
    if (lookup.failure != why) {
        lookup.failure = why;
        log::warn(
            "upstream '{}' server {}: cannot resolve '{}' ({}); keeping its addresses: {} "
            "(logged once until this changes)",
            upstream_.config().name, upstream_.config().servers[lookup.entry].text,
            upstream_.config().servers[lookup.entry].host, why, describe(lookup.addresses));
    }
    // Requests that waited for this first answer now fail, unless another
    // server can take them.
    if (first_answer) upstream_.wake_waiters();
}

}  // namespace portico::proxy
