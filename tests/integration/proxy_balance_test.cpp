// Balancing over several upstream servers: round robin, least connections,
// ip_hash, and passive health (a down server skipped, then back after
// fail_timeout; a lone server never skipped; with every server down, the one
// back first still tried). One worker, so one balancer sees every request and
// the counts are exact.
#include <algorithm>
#include <catch2/catch.hpp>
#include <memory>
#include <optional>
#include <thread>

#include "proxy_support.hpp"
#include "upstream_server.hpp"

using namespace portico::test;

namespace {

struct Trio {
    std::vector<std::unique_ptr<UpstreamServer>> servers;
    explicit Trio(Behaviour behaviour = answer_ok) {
        for (int i = 0; i < 3; ++i) servers.push_back(std::make_unique<UpstreamServer>(behaviour));
    }
    std::vector<std::string> addresses() const {
        std::vector<std::string> result;
        for (const auto& server : servers) result.push_back(server->address());
        return result;
    }
    std::vector<size_t> counts() const {
        std::vector<size_t> result;
        for (const auto& server : servers) result.push_back(server->request_count());
        return result;
    }
};

std::string loopback(uint16_t port) { return "127.0.0.1:" + std::to_string(port); }

size_t occurrences(const std::string& text, const std::string& part) {
    size_t count = 0;
    for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1))
        ++count;
    return count;
}

void fetch_ok(uint16_t port, int times, const std::string& target = "/") {
    for (int i = 0; i < times; ++i) {
        auto response = proxy_fetch(port, get_request(target));
        REQUIRE(response);
        REQUIRE(response->status == 200);
    }
}

}  // namespace

TEST_CASE("round_robin spreads requests evenly", "[proxy]") {
    Trio trio;
    std::string options = "balance = \"round_robin\"";
    SECTION("with pooled connections") {}
    SECTION("with keepalive = 0") {
        options += "\nkeepalive = 0";
    }
    Portico portico(proxy_config(trio.addresses(), options));
    fetch_ok(portico.port(), 30);
    CHECK(trio.counts() == std::vector<size_t>{10, 10, 10});
}

TEST_CASE("least_conn avoids the server busy with a long request", "[proxy]") {
    Trio trio([](const ReceivedRequest& request) {
        if (request.target == "/hold") {
            Reply reply;
            reply.wait_release();
            reply.send("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nheld");
            return reply;
        }
        return answer_ok(request);
    });
    Portico portico(proxy_config(trio.addresses(), "balance = \"least_conn\""));
    Client holder(portico.port());
    holder.send(get_request("/hold"));
    size_t busy = 3;
    REQUIRE(UpstreamServer::wait_until(
        [&] {
            for (size_t i = 0; i < 3; ++i)
                if (trio.servers[i]->request_count() == 1) busy = i;
            return busy < 3;
        },
        2s));
    fetch_ok(portico.port(), 12);
    auto counts = trio.counts();
    INFO("busy server " << busy);
    CHECK(counts[busy] == 1);  // only the held request
    CHECK(counts[0] + counts[1] + counts[2] == 13);
    for (auto& server : trio.servers) server->release_held();
    ResponseReader reader(holder.fd());
    auto held = reader.read();
    REQUIRE(held);
    CHECK(held->body == "held");
}

TEST_CASE("ip_hash sends every request of one client address to one server", "[proxy]") {
    Trio trio;
    Portico portico(proxy_config(trio.addresses(), "balance = \"ip_hash\""));
    fetch_ok(portico.port(), 20);
    auto counts = trio.counts();
    std::sort(counts.begin(), counts.end());
    CHECK(counts == std::vector<size_t>{0, 0, 20});
}

TEST_CASE("a down server is skipped and used again after fail_timeout", "[proxy]") {
    UpstreamServer live;
    uint16_t down_port = unused_port();
    Portico portico(proxy_config({live.address(), "127.0.0.1:" + std::to_string(down_port)},
                                 "max_fails = 1\nfail_timeout = \"1s\""));
    // Every request succeeds: the refused one is tried on the other server.
    fetch_ok(portico.port(), 10);
    CHECK(live.request_count() == 10);

    UpstreamServer revived(answer_ok, down_port);
    std::this_thread::sleep_for(1300ms);
    fetch_ok(portico.port(), 10);
    INFO("live " << live.request_count() << ", revived " << revived.request_count());
    CHECK(revived.request_count() >= 3);
    CHECK(live.request_count() + revived.request_count() == 20);
}

TEST_CASE("a request with a body refused by one server is sent whole to the next", "[proxy]") {
    // A refused connect means nothing was sent: safe to retry any method,
    // and the retry must carry the body.
    UpstreamServer live(
        [](const ReceivedRequest& request) { return Reply::text(200, request.body); });
    Portico portico(proxy_config({"127.0.0.1:" + std::to_string(unused_port()), live.address()},
                                 "max_fails = 0"));
    for (int i = 0; i < 4; ++i) {
        std::string body = random_bytes(1000, static_cast<uint32_t>(i));
        auto response = proxy_fetch(portico.port(),
                                    "POST /form HTTP/1.1\r\nHost: h\r\n"
                                    "Content-Length: 1000\r\n\r\n" +
                                        body);
        REQUIRE(response);
        CHECK(response->status == 200);
        bool intact = response->body == body;
        CHECK(intact);
    }
    CHECK(live.request_count() == 4);
}

// Both refuse at once: each request tries them (all down: the one back first,
// then the other) and still answers 502 within a second, naming both.
TEST_CASE("all servers refusing: 502 quickly and the error log names each", "[proxy]") {
    std::string first = "127.0.0.1:" + std::to_string(unused_port());
    std::string second = "127.0.0.1:" + std::to_string(unused_port());
    Portico portico(proxy_config({first, second}));
    for (int i = 0; i < 3; ++i) {
        auto start = std::chrono::steady_clock::now();
        auto response = proxy_fetch(portico.port(), get_request("/"));
        REQUIRE(response);
        CHECK(response->status == 502);
        CHECK(ms_since(start) < 1000);
    }
    INFO(portico.log());
    CHECK(portico.wait_for_log(first, 1, 2s));
    CHECK(portico.wait_for_log(second, 1, 2s));
}

TEST_CASE("a lone server is never skipped after a failure", "[proxy]") {
    // The defaults, max_fails = 1 and fail_timeout = 10s, would otherwise
    // answer 502 without a try for 10 s after one slow request or a restart.
    uint16_t port = unused_port();
    uint16_t metrics_port = unused_port();
    Portico portico(with_metrics(proxy_config({loopback(port)}, "read_timeout = \"300ms\""),
                                 metrics_port));
    std::string failure;
    SECTION("one request past read_timeout") {
        UpstreamServer upstream(
            [](const ReceivedRequest& request) {
                return request.target == "/slow" ? Reply::silence() : answer_ok(request);
            },
            port);
        auto slow = proxy_fetch(portico.port(), get_request("/slow"));
        REQUIRE(slow);
        CHECK(slow->status == 504);
        fetch_ok(portico.port(), 3);
        failure = "timeout";
    }
    SECTION("the app restarting") {
        auto refused = proxy_fetch(portico.port(), get_request("/"));
        REQUIRE(refused);
        CHECK(refused->status == 502);
        UpstreamServer restarted(answer_ok, port);
        fetch_ok(portico.port(), 3);
        failure = "connect";
    }
    // Still counted, never marked down.
    CHECK(upstream_errors(metrics_port, loopback(port), failure) == 1);
    INFO(portico.log());
    CHECK(portico.log().find("marked down") == std::string::npos);
}

TEST_CASE("with every server down, a request still tries the one back first", "[proxy]") {
    uint16_t first_port = unused_port();
    uint16_t second_port = unused_port();
    uint16_t metrics_port = unused_port();
    // No down period ends during the test.
    Portico portico(with_metrics(
        proxy_config({loopback(first_port), loopback(second_port)}, "fail_timeout = \"60s\""),
        metrics_port));
    // Both refuse: both tried (the first one first), both marked down.
    auto refused = proxy_fetch(portico.port(), get_request("/"));
    REQUIRE(refused);
    CHECK(refused->status == 502);
    REQUIRE(portico.wait_for_log("marked down", 2, 2s));

    uint16_t back_port = 0;
    uint16_t down_port = 0;
    double down_failures = 0;
    SECTION("the first one marked down comes back: tried first, and served") {
        back_port = first_port;
        down_port = second_port;
        down_failures = 1;
    }
    SECTION("the other comes back: the first one is tried again, then it") {
        back_port = second_port;
        down_port = first_port;
        down_failures = 2;
    }
    UpstreamServer revived(answer_ok, back_port);
    fetch_ok(portico.port(), 5);
    CHECK(revived.request_count() == 5);
    // Once the revived one answered it was up again: the other, still down,
    // was not tried after that.
    CHECK(upstream_errors(metrics_port, loopback(down_port), "connect") == down_failures);
    std::string tried_while_down = "every server is marked down; trying";
    CHECK(portico.wait_for_log(tried_while_down, 1, 2s));
    INFO(portico.log());
    CHECK(occurrences(portico.log(), tried_while_down) == 1);
}
