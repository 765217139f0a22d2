// Upstream::pick, the balancer's decisions: round robin, least_conn,
// ip_hash, servers marked down by max_fails and back after fail_timeout, a
// lone server never skipped, every server down, and max_connections. (The
// same under real traffic: tests/integration/proxy_balance_test.cpp.)
#include <arpa/inet.h>
#include <uv.h>

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "config/config.hpp"
#include "config/units.hpp"
#include "core/io_poller.hpp"
#include "proxy/upstream.hpp"
#include "test_worker.hpp"

using namespace portico;
using namespace std::chrono_literals;

namespace {

http::PeerAddress client_at(const char* ip) {
    http::PeerAddress address{};
    address.v4.sin_family = AF_INET;
    address.v4.sin_port = htons(40000);
    inet_pton(AF_INET, ip, &address.v4.sin_addr);
    return address;
}

// A worker's Upstream over `count` IP-literal servers, on a loop that is
// never run; the test moves its clock (uv_update_time) after sleeping.
class Balancer {
public:
    explicit Balancer(size_t count, config::Balance balance = config::Balance::round_robin,
                      uint32_t max_fails = 1, uint32_t max_connections = 0) {
        config::UpstreamConfig config;
        config.name = "app";
        config.balance = balance;
        config.max_fails = max_fails;
        config.max_connections = max_connections;
        config.fail_timeout = std::chrono::milliseconds(50);
        for (size_t i = 0; i < count; ++i)
            config.servers.push_back(*config::parse_socket_address(
                "127.0.0.1:" + std::to_string(3000 + i), config::HostNames::refused));
        whole_.upstreams.push_back(config);
        worker_ = std::make_unique<test::TestWorker>(whole_);
        upstream_ = std::make_unique<proxy::Upstream>(worker_->poller(), whole_.upstreams[0], 0,
                                                      worker_->counters());
    }
    ~Balancer() {
        upstream_->close();
        worker_->finish();
    }

    proxy::Upstream& upstream() { return *upstream_; }
    // The port of the server a new request from `client` gets; 0 for none.
    int pick(const char* client = "10.0.0.1", const proxy::TriedServers& tried = {}) {
        bool busy = false;
        proxy::UpstreamServer* server = upstream_->pick(client_at(client), tried, busy);
        last_busy = busy;
        return server ? ntohs(server->address.v4.sin_port) : 0;
    }
    proxy::UpstreamServer* server(int port) {
        proxy::TriedServers tried;
        bool busy = false;
        // Walks the balancer until it reaches the port (every server once).
        while (proxy::UpstreamServer* next = upstream_->pick({}, tried, busy)) {
            if (ntohs(next->address.v4.sin_port) == port) return next;
            tried.add(next);
        }
        return nullptr;
    }
    void advance(std::chrono::milliseconds by) { worker_->advance(by); }
    bool last_busy = false;

private:
    config::Config whole_;
    std::unique_ptr<test::TestWorker> worker_;
    std::unique_ptr<proxy::Upstream> upstream_;
};

}  // namespace

TEST_CASE("upstream pick: round robin takes the servers in turn, skipping the tried", "[proxy]") {
    Balancer balancer(3);
    std::vector<int> order;
    for (int i = 0; i < 6; ++i) order.push_back(balancer.pick());
    CHECK(order == std::vector<int>{3000, 3001, 3002, 3000, 3001, 3002});
    // A retry never gets a server it already tried.
    proxy::TriedServers tried;
    tried.add(balancer.server(3000));
    tried.add(balancer.server(3001));
    for (int i = 0; i < 3; ++i) CHECK(balancer.pick("10.0.0.1", tried) == 3002);
    tried.add(balancer.server(3002));
    CHECK(balancer.pick("10.0.0.1", tried) == 0);
}

TEST_CASE("upstream pick: least_conn takes the server answering the fewest requests", "[proxy]") {
    Balancer balancer(3, config::Balance::least_conn);
    balancer.server(3000)->active_requests = 4;
    balancer.server(3001)->active_requests = 1;
    balancer.server(3002)->active_requests = 2;
    CHECK(balancer.pick() == 3001);
    CHECK(balancer.pick() == 3001);
    balancer.server(3001)->active_requests = 3;
    CHECK(balancer.pick() == 3002);
    // Ties are shared in turn.
    for (int port : {3000, 3001, 3002}) balancer.server(port)->active_requests = 0;
    std::map<int, int> picks;
    for (int i = 0; i < 6; ++i) ++picks[balancer.pick()];
    CHECK(picks == std::map<int, int>{{3000, 2}, {3001, 2}, {3002, 2}});
}

TEST_CASE("upstream pick: ip_hash keeps a client on one server, and spreads clients", "[proxy]") {
    Balancer balancer(3, config::Balance::ip_hash);
    std::map<int, int> servers_used;
    for (int client = 1; client <= 60; ++client) {
        std::string ip = "10.0." + std::to_string(client) + ".7";
        int first = balancer.pick(ip.c_str());
        for (int again = 0; again < 3; ++again) CHECK(balancer.pick(ip.c_str()) == first);
        ++servers_used[first];
    }
    CHECK(servers_used.size() == 3);
    // Its server down, the client goes to another one meanwhile.
    int usual = balancer.pick("10.0.1.7");
    balancer.upstream().report_failure(*balancer.server(usual), metrics::UpstreamError::connect);
    int meanwhile = balancer.pick("10.0.1.7");
    CHECK(meanwhile != 0);
    CHECK(meanwhile != usual);
}

TEST_CASE("upstream pick: max_fails marks a server down for fail_timeout", "[proxy]") {
    Balancer balancer(2, config::Balance::round_robin, 2);
    proxy::UpstreamServer* failing = balancer.server(3000);
    balancer.upstream().report_failure(*failing, metrics::UpstreamError::connect);
    // One failure of two: still picked.
    std::vector<int> order{balancer.pick(), balancer.pick()};
    CHECK(std::count(order.begin(), order.end(), 3000) == 1);
    balancer.upstream().report_failure(*failing, metrics::UpstreamError::timeout);
    for (int i = 0; i < 4; ++i) CHECK(balancer.pick() == 3001);
    balancer.advance(70ms);  // past fail_timeout (50 ms)
    order = {balancer.pick(), balancer.pick()};
    CHECK(std::count(order.begin(), order.end(), 3000) == 1);
}

TEST_CASE("upstream pick: a lone server is never marked down (nginx)", "[proxy]") {
    Balancer balancer(1);
    for (int i = 0; i < 5; ++i)
        balancer.upstream().report_failure(*balancer.server(3000), metrics::UpstreamError::connect);
    // Not down at all (every server down would still pick it, as the first back).
    CHECK(balancer.server(3000)->down_until_ms == 0);
    CHECK(balancer.pick() == 3000);
}

TEST_CASE("upstream pick: every server down, the first to come back is tried, then the next",
          "[proxy]") {
    Balancer balancer(2);
    balancer.upstream().report_failure(*balancer.server(3001), metrics::UpstreamError::connect);
    balancer.advance(20ms);
    balancer.upstream().report_failure(*balancer.server(3000), metrics::UpstreamError::connect);
    // Both down: 3001 went down first, so it is back first.
    CHECK(balancer.pick() == 3001);
    proxy::TriedServers tried;
    tried.add(balancer.server(3001));
    CHECK(balancer.pick("10.0.0.1", tried) == 3000);
}

TEST_CASE("upstream pick: a server at max_connections is skipped, and none with room says busy",
          "[proxy]") {
    Balancer balancer(2, config::Balance::round_robin, 1, 1);
    balancer.server(3000)->open_connections = 1;
    CHECK(balancer.pick() == 3001);
    CHECK(balancer.pick() == 3001);
    balancer.server(3001)->open_connections = 1;
    CHECK(balancer.pick() == 0);
    CHECK(balancer.last_busy);
}
