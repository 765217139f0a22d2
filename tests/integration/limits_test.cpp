// Rate limits and max_concurrent with the real binary: held across two
// workers together, burst requests waiting their turn with their bodies,
// keys apart, slots given back however a request ends, and a reload that
// keeps an unchanged limit's keys.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "harness.hpp"
#include "http2_support.hpp"
#include "proxy_support.hpp"
#include "upstream_server.hpp"

using namespace portico::test;

namespace limits_test {

namespace {

using Clock = std::chrono::steady_clock;

// The folder every static test serves: index.html.
const TempDir& site() {
    static TempDir dir;
    static bool written = !dir.write("index.html", "hello\n").empty();
    (void)written;
    return dir;
}

std::string static_config(const std::string& limit, const std::string& location) {
    return "[server]\nlisten = [\"{listen}\"]\nworkers = 2\n\n[http2]\ncleartext = "
           "true\n\n[limit.per_key]\n" +
           limit + "\n[[location]]\nprefix = \"/\"\nroot = \"" + site().path() + "\"\n" + location;
}

struct StaticServer {
    explicit StaticServer(const std::string& config) : portico(config) {}
    Portico portico;
};

int status_of(uint16_t port, const std::string& path, const std::string& extra = "") {
    std::optional<Response> response = fetch(port, path, extra);
    return response ? response->status : 0;
}

// `count` requests at once, each on its own connection: their statuses and
// how long each took, in the order they were sent.
struct Outcome {
    int status = 0;
    std::chrono::milliseconds took{};
    std::string body;
};
std::vector<Outcome> concurrent_requests(uint16_t port, int count, const std::string& request) {
    std::vector<std::future<Outcome>> futures;
    for (int i = 0; i < count; ++i) {
        futures.push_back(std::async(std::launch::async, [port, request] {
            auto start = Clock::now();
            std::optional<Response> response = proxy_fetch(port, request, 10s);
            Outcome outcome;
            outcome.took =
                std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
            if (response) {
                outcome.status = response->status;
                outcome.body = response->body;
            }
            return outcome;
        }));
    }
    std::vector<Outcome> outcomes;
    for (auto& future : futures) outcomes.push_back(future.get());
    return outcomes;
}

int count_status(const std::vector<Outcome>& outcomes, int status) {
    int n = 0;
    for (const Outcome& outcome : outcomes) n += outcome.status == status;
    return n;
}

}  // namespace

TEST_CASE("a rate limit holds across two workers together: 10r/s with burst 5 over 10 s",
          "[limits]") {
    // delay = burst (nginx's nodelay): the burst passes at once, the rest
    // is refused, so a fast client sees every answer at once.
    StaticServer server(
        static_config("key = \"$remote_addr\"\nrate = \"10r/s\"\nburst = 5\ndelay = 5\n",
                      "limit = [\"per_key\"]\n"));
    uint16_t port = server.portico.port();
    REQUIRE(status_of(port, "/index.html") == 200);  // the first: the bucket starts empty
    int passed = 1;
    int refused = 0;
    int other = 0;
    auto end = Clock::now() + 10s;
    // A new connection for each request: the kernel spreads them over both
    // workers' sockets (SO_REUSEPORT), so per-worker buckets would let
    // about twice as many through.
    while (Clock::now() < end) {
        int status = status_of(port, "/index.html");
        if (status == 200)
            ++passed;
        else if (status == 429)
            ++refused;
        else
            ++other;
        std::this_thread::sleep_for(2ms);
    }
    INFO("passed " << passed << ", refused " << refused << ", other " << other);
    CHECK(other == 0);
    CHECK(refused > 500);
    // The first, the burst of 5, then one every 100 ms: 106.
    CHECK(passed >= 103);
    CHECK(passed <= 108);
    CHECK(server.portico.wait_for_log("limit 'per_key' refused a request of key '127.0.0.1'"));
    // Logged once a second per key, not per refusal.
    CHECK(server.portico.log().find("refused a request") != std::string::npos);
    size_t lines = 0;
    for (size_t at = 0;
         (at = server.portico.log().find("refused a request", at)) != std::string::npos; ++at)
        ++lines;
    CHECK(lines <= 13);
}

TEST_CASE("requests of the burst wait their turn at the rate, beyond it they are refused",
          "[limits]") {
    StaticServer server(static_config("key = \"$remote_addr\"\nrate = \"10r/s\"\nburst = 3\n",
                                      "limit = [\"per_key\"]\n"));
    uint16_t port = server.portico.port();
    SECTION("HTTP/1.1") {
        std::vector<Outcome> outcomes = concurrent_requests(port, 5, get_request("/index.html"));
        CHECK(count_status(outcomes, 200) == 4);
        CHECK(count_status(outcomes, 429) == 1);
        std::chrono::milliseconds slowest{};
        for (const Outcome& outcome : outcomes)
            if (outcome.status == 200) {
                CHECK(outcome.body == "hello\n");
                slowest = std::max(slowest, outcome.took);
            }
        // The third of the burst waits 300 ms for its turn.
        CHECK(slowest >= 250ms);
        CHECK(slowest < 2000ms);
    }
    SECTION("HTTP/2: streams of one connection") {
        h2::Client client(port);
        REQUIRE(client.connected());
        std::vector<uint32_t> ids;
        auto start = Clock::now();
        for (int i = 0; i < 5; ++i) ids.push_back(client.get("/index.html"));
        REQUIRE(client.wait_streams(ids, 5s));
        auto took = Clock::now() - start;
        int ok = 0, refused = 0;
        for (uint32_t id : ids) {
            ok += client.result(id).status == 200;
            refused += client.result(id).status == 429;
        }
        CHECK(ok == 4);
        CHECK(refused == 1);
        CHECK(took >= 250ms);
    }
    // The server still serves once the bucket has drained.
    std::this_thread::sleep_for(500ms);
    CHECK(status_of(port, "/index.html") == 200);
}

TEST_CASE("keys are counted apart, and a key that expands to nothing is not counted", "[limits]") {
    StaticServer server(
        static_config("key = \"$http_x_user\"\nrate = \"1r/m\"\n", "limit = [\"per_key\"]\n"));
    uint16_t port = server.portico.port();
    CHECK(status_of(port, "/index.html", "X-User: alice\r\n") == 200);
    CHECK(status_of(port, "/index.html", "X-User: alice\r\n") == 429);
    CHECK(status_of(port, "/index.html", "X-User: bob\r\n") == 200);
    CHECK(status_of(port, "/index.html", "X-User: bob\r\n") == 429);
    for (int i = 0; i < 3; ++i) CHECK(status_of(port, "/index.html") == 200);
}

TEST_CASE("a request that waits for its turn keeps its body for the upstream", "[limits]") {
    UpstreamServer upstream([](const ReceivedRequest& request) {
        return Reply::text(
            200, std::to_string(request.body.size()) + " " +
                     std::to_string(request.body == random_bytes(request.body.size(), 7)));
    });
    Portico portico(
        "[server]\nlisten = [\"{listen}\"]\nworkers = 1\n\n[http2]\ncleartext = "
        "true\n\n[limit.per_key]\n"
        "key = \"$remote_addr\"\nrate = \"20r/s\"\nburst = 4\n\n"
        "[upstream.app]\nservers = [\"" +
        upstream.address() +
        "\"]\n\n[[location]]\nprefix = \"/\"\nproxy = \"app\"\nlimit = [\"per_key\"]\n");
    std::string body = random_bytes(200'000, 7);
    SECTION("HTTP/1.1") {
        std::string request = "POST /upload HTTP/1.1\r\nHost: a.test\r\nContent-Length: " +
                              std::to_string(body.size()) + "\r\n\r\n" + body;
        std::vector<Outcome> outcomes = concurrent_requests(portico.port(), 4, request);
        for (const Outcome& outcome : outcomes) {
            CHECK(outcome.status == 200);
            CHECK(outcome.body == "200000 1");
        }
    }
    SECTION("HTTP/2") {
        h2::Client client(portico.port());
        REQUIRE(client.connected());
        std::vector<uint32_t> ids;
        for (int i = 0; i < 4; ++i)
            ids.push_back(client.request(
                h2::Client::request_fields("POST", "/upload", "http", "a.test"), body));
        REQUIRE(client.wait_streams(ids, 10s));
        for (uint32_t id : ids) {
            CHECK(client.result(id).status == 200);
            CHECK(client.result(id).body == "200000 1");
        }
    }
    CHECK(upstream.requests().size() == 4);
}

TEST_CASE("max_concurrent is exact across workers, and a slot comes back however a request ends",
          "[limits]") {
    UpstreamServer upstream(
        [](const ReceivedRequest&) { return Reply::text(200, "slow").delayed(600ms); });
    Portico portico(
        "[server]\nlisten = [\"{listen}\"]\nworkers = 2\n\n[http2]\ncleartext = true\n\n"
        "[upstream.app]\nservers = [\"" +
        upstream.address() +
        "\"]\n\n[[location]]\nprefix = \"/\"\nproxy = \"app\"\n"
        "max_concurrent = { key = \"$remote_addr\", count = 3 }\n");
    uint16_t port = portico.port();
    std::string request = get_request("/slow");
    SECTION("HTTP/1.1, connections spread over both workers") {
        for (int round = 0; round < 2; ++round) {
            std::vector<Outcome> outcomes = concurrent_requests(port, 8, request);
            INFO("round " << round);
            CHECK(count_status(outcomes, 200) == 3);
            CHECK(count_status(outcomes, 429) == 5);
        }
    }
    SECTION("HTTP/2 streams") {
        h2::Client client(port);
        REQUIRE(client.connected());
        std::vector<uint32_t> ids;
        for (int i = 0; i < 6; ++i) ids.push_back(client.get("/slow"));
        REQUIRE(client.wait_streams(ids, 5s));
        int ok = 0, refused = 0;
        for (uint32_t id : ids) {
            ok += client.result(id).status == 200;
            refused += client.result(id).status == 429;
        }
        CHECK(ok == 3);
        CHECK(refused == 3);
    }
    SECTION("clients that leave give their slots back") {
        std::vector<int> leaving;
        for (int i = 0; i < 3; ++i) {
            int fd = connect_loopback(port);
            REQUIRE(::send(fd, request.data(), request.size(), 0) ==
                    static_cast<ssize_t>(request.size()));
            leaving.push_back(fd);
        }
        std::this_thread::sleep_for(150ms);
        CHECK(status_of(port, "/slow") == 429);  // all three slots are held
        for (int fd : leaving) ::close(fd);
        std::this_thread::sleep_for(150ms);
        std::vector<Outcome> outcomes = concurrent_requests(port, 4, request);
        CHECK(count_status(outcomes, 200) == 3);
        CHECK(count_status(outcomes, 429) == 1);
    }
    SECTION("an upstream that fails gives the slot back") {
        upstream.set_behaviour(
            [](const ReceivedRequest&) { return Reply::raw("", Reply::Then::close); });
        for (int i = 0; i < 5; ++i) CHECK(status_of(port, "/slow") == 502);
        upstream.set_behaviour(
            [](const ReceivedRequest&) { return Reply::text(200, "slow").delayed(600ms); });
        std::vector<Outcome> outcomes = concurrent_requests(port, 4, request);
        CHECK(count_status(outcomes, 200) == 3);
    }
}

TEST_CASE("a reload keeps an unchanged limit's keys, and starts a changed one afresh", "[limits]") {
    std::string config =
        static_config("key = \"$remote_addr\"\nrate = \"1r/m\"\n", "limit = [\"per_key\"]\n");
    StaticServer server(config);
    uint16_t port = server.portico.port();
    REQUIRE(status_of(port, "/index.html") == 200);
    REQUIRE(status_of(port, "/index.html") == 429);
    server.portico.signal(SIGHUP);
    REQUIRE(server.portico.wait_for_log("reloaded"));
    std::this_thread::sleep_for(200ms);
    CHECK(status_of(port, "/index.html") == 429);
    server.portico.rewrite_config(
        static_config("key = \"$remote_addr\"\nrate = \"2r/m\"\n", "limit = [\"per_key\"]\n"));
    server.portico.signal(SIGHUP);
    REQUIRE(server.portico.wait_for_log("reloaded", 2));
    std::this_thread::sleep_for(200ms);
    CHECK(status_of(port, "/index.html") == 200);
}

}  // namespace limits_test
