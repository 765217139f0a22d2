// Upstream::set_addresses, the bookkeeping behind `resolve`: where a name's
// servers go in the balancer's order, what happens to an address that
// leaves the answer, and to one that comes back while still draining. (The
// lookups themselves, and traffic moving under load, are in
// tests/integration/proxy_resolve_test.cpp.)
#include <arpa/inet.h>
#include <uv.h>

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "config/units.hpp"
#include "core/io_poller.hpp"
#include "proxy/upstream.hpp"
#include "test_worker.hpp"

using namespace portico;

namespace {

http::PeerAddress address(const char* ip, uint16_t port) {
    http::PeerAddress address{};
    address.v4.sin_family = AF_INET;
    address.v4.sin_port = htons(port);
    inet_pton(AF_INET, ip, &address.v4.sin_addr);
    return address;
}

// A worker's Upstream over three IP-literal entries, on a loop that is
// never run: set_addresses and pick need none.
class UpstreamUnderTest {
public:
    UpstreamUnderTest() {
        config_.name = "app";
        for (const char* text : {"127.0.0.1:3000", "127.0.0.1:3001", "127.0.0.1:3002"})
            config_.servers.push_back(
                *config::parse_socket_address(text, config::HostNames::refused));
        whole_.upstreams.push_back(config_);
        worker_ = std::make_unique<test::TestWorker>(whole_);
        upstream_ = std::make_unique<proxy::Upstream>(worker_->poller(), whole_.upstreams[0], 0,
                                                      worker_->counters());
    }
    ~UpstreamUnderTest() {
        upstream_->close();
        worker_->finish();
    }

    proxy::Upstream& upstream() { return *upstream_; }

    // Every server the balancer may pick now, in its order (round robin
    // from the first, each once).
    std::vector<proxy::UpstreamServer*> servers() {
        std::vector<proxy::UpstreamServer*> order;
        proxy::TriedServers tried;
        bool busy = false;
        while (proxy::UpstreamServer* server = upstream_->pick({}, tried, busy)) {
            order.push_back(server);
            tried.add(server);
        }
        return order;
    }

private:
    config::UpstreamConfig config_;
    config::Config whole_;
    std::unique_ptr<test::TestWorker> worker_;
    std::unique_ptr<proxy::Upstream> upstream_;
};

std::vector<std::string> names(const std::vector<proxy::UpstreamServer*>& servers) {
    std::vector<std::string> result;
    for (const proxy::UpstreamServer* server : servers)
        result.push_back(http::format_ip_and_port(server->address));
    return result;
}

}  // namespace

TEST_CASE("set_addresses puts a name's servers in its entry's place, drains and revives",
          "[proxy][resolve]") {
    UpstreamUnderTest under_test;
    proxy::Upstream& upstream = under_test.upstream();
    REQUIRE(names(under_test.servers()) ==
            std::vector<std::string>{"127.0.0.1:3000", "127.0.0.1:3001", "127.0.0.1:3002"});

    // The middle entry now stands for two addresses: between its neighbours.
    upstream.set_addresses(1, {address("10.0.0.5", 3001), address("10.0.0.6", 3001)});
    std::vector<proxy::UpstreamServer*> both = under_test.servers();
    REQUIRE(names(both) == std::vector<std::string>{"127.0.0.1:3000", "10.0.0.5:3001",
                                                    "10.0.0.6:3001", "127.0.0.1:3002"});
    CHECK(both[1]->index == 1);
    CHECK(both[2]->index == 1);

    // One leaves the answer: never picked, kept while draining.
    proxy::UpstreamServer* leaving = both[1];
    upstream.set_addresses(1, {address("10.0.0.6", 3001)});
    CHECK(names(under_test.servers()) ==
          std::vector<std::string>{"127.0.0.1:3000", "10.0.0.6:3001", "127.0.0.1:3002"});
    CHECK(leaving->removed);

    // It comes back before it was freed: the same server, health and pool.
    upstream.set_addresses(1, {address("10.0.0.5", 3001), address("10.0.0.6", 3001)});
    std::vector<proxy::UpstreamServer*> again = under_test.servers();
    CHECK(again[1] == leaving);
    CHECK_FALSE(leaving->removed);
    CHECK(again[2] == both[2]);

    // Gone again, and freed once no connection is open (none here): a new
    // address is a new server, which a request that tried the old one has
    // not tried, even if it reuses its memory.
    upstream.set_addresses(1, {address("10.0.0.6", 3001)});
    proxy::TriedServers tried;
    tried.add(leaving);
    upstream.free_drained_servers();
    upstream.set_addresses(1, {address("10.0.0.6", 3001), address("10.0.0.7", 3001)});
    std::vector<proxy::UpstreamServer*> last = under_test.servers();
    REQUIRE(names(last) == std::vector<std::string>{"127.0.0.1:3000", "10.0.0.6:3001",
                                                    "10.0.0.7:3001", "127.0.0.1:3002"});
    CHECK_FALSE(tried.contains(last[2]));
}
