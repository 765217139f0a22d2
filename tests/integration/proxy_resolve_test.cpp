// `resolve`: an upstream server given as a host name whose addresses change
// while requests flow, the way a Compose service or a Kubernetes headless
// Service's pods do. The name lives in /etc/hosts (HostsFileEntry) and maps
// to loopback aliases, 127.0.0.2 and 127.0.0.3, where the test's upstream
// servers listen on one port. One worker, so one resolver and one balancer
// see everything.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <mutex>
#include <thread>

#include "hosts_file.hpp"
#include "metrics_support.hpp"
#include "proxy_support.hpp"
#include "skip.hpp"
#include "upstream_server.hpp"

using namespace portico::test;

namespace {

using Clock = std::chrono::steady_clock;

constexpr auto resolve_interval = 300ms;
// What a noisy two-core machine may add to an interval: the lookup runs on
// a thread, then the answer waits for a loop turn.
constexpr auto scheduling_slack = 700ms;

std::string unique_name() {
    return "portico-resolve-test-" + std::to_string(::getpid()) + ".invalid";
}

// Each upstream server answers with its own name; "/slow" waits for
// release_held().
Behaviour answer_as(const std::string& who) {
    return [who](const ReceivedRequest& request) {
        Reply reply;
        if (request.target == "/slow") reply.wait_release();
        return reply.send("HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(who.size()) +
                          "\r\n\r\n" + who);
    };
}

std::string resolve_config(const std::string& server) {
    return proxy_config({server}, "resolve = \"300ms\"") +
           "\n[metrics]\nlisten = \"127.0.0.1:0\"\n";
}

// Requests one after another, each on a new connection, from a thread,
// until destroyed: every answer with the time it came.
class RequestFlow {
public:
    struct Answer {
        Clock::time_point sent;
        Clock::time_point at;
        int status;  // 0: no complete response
        std::string body;
    };

    explicit RequestFlow(uint16_t port)
        : thread_([this, port] {
              while (!stop_) {
                  auto sent = Clock::now();
                  auto response = proxy_fetch(port, get_request("/flow"), 3s);
                  std::lock_guard lock(mutex_);
                  answers_.push_back({sent, Clock::now(), response ? response->status : 0,
                                      response ? response->body : ""});
                  // Some 50 requests a second: enough to see each step.
                  std::this_thread::sleep_for(20ms);
              }
          }) {}
    ~RequestFlow() { stop(); }
    void stop() {
        stop_ = true;
        if (thread_.joinable()) thread_.join();
    }

    std::vector<Answer> answers() const {
        std::lock_guard lock(mutex_);
        return answers_;
    }
    // Waits until an answer after `since` came from `who`; its time.
    std::optional<Clock::time_point> first_from(const std::string& who, Clock::time_point since,
                                                std::chrono::milliseconds timeout) const {
        std::optional<Clock::time_point> found;
        UpstreamServer::wait_until(
            [&] {
                for (const Answer& answer : answers())
                    if (answer.at >= since && answer.body == who) {
                        found = answer.at;
                        return true;
                    }
                return false;
            },
            timeout);
        return found;
    }
    size_t failures() const {
        size_t count = 0;
        for (const Answer& answer : answers()) count += answer.status != 200;
        return count;
    }

private:
    std::atomic<bool> stop_{false};
    mutable std::mutex mutex_;
    std::vector<Answer> answers_;
    std::thread thread_;
};

long long ms_between(Clock::time_point from, Clock::time_point to) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(to - from).count();
}

}  // namespace

TEST_CASE("resolve: every address of a name serves, a removed one drains, none fails",
          "[proxy][resolve]") {
    HostsFileEntry hosts(unique_name());
    if (!hosts.writable())
        PORTICO_SKIP("the resolve tests write /etc/hosts, which needs root (CI runs as root)");
    UpstreamServer first(answer_as("first"), 0, "127.0.0.2");
    UpstreamServer second(answer_as("second"), first.port(), "127.0.0.3");
    std::string server = hosts.name() + ":" + std::to_string(first.port());
    hosts.map_to({"127.0.0.2"});
    Portico portico(resolve_config(server));
    uint16_t metrics = metrics_port(portico);

    RequestFlow flow(portico.port());
    REQUIRE(flow.first_from("first", Clock::now() - 1h, 5s));

    // A slow request in flight on the first address, then a second address.
    Client slow(portico.port());
    slow.send(get_request("/slow"));
    auto slow_arrived = [&] {
        for (const ReceivedRequest& request : first.requests())
            if (request.target == "/slow") return true;
        return false;
    };
    REQUIRE(UpstreamServer::wait_until(slow_arrived, 5s));
    auto both_since = Clock::now();
    hosts.map_to({"127.0.0.2", "127.0.0.3"});
    auto second_seen = flow.first_from("second", both_since, 5s);
    REQUIRE(second_seen);
    INFO("second address served after " << ms_between(both_since, *second_seen) << " ms");
    CHECK(*second_seen - both_since < resolve_interval + scheduling_slack);
    // Both serve (round robin): the first one too, after the change.
    REQUIRE(flow.first_from("first", *second_seen, 5s));

    // The first address goes: new requests only to the second, within an
    // interval; the slow request on the first still completes.
    auto moved_at = Clock::now();
    hosts.map_to({"127.0.0.3"});
    REQUIRE(portico.wait_for_log(
        "resolves to 127.0.0.3:" + std::to_string(first.port()) + " (was 127.0.0.2", 1, 5s));
    auto settled = Clock::now();
    std::this_thread::sleep_for(3 * resolve_interval);
    // Sent after the worker logged the new answer, so handled after it.
    for (const RequestFlow::Answer& answer : flow.answers())
        if (answer.sent > settled) CHECK(answer.body == "second");
    INFO("moved after at most " << ms_between(moved_at, settled) << " ms");
    CHECK(settled - moved_at < resolve_interval + scheduling_slack);

    first.release_held();
    auto slow_response = slow.read_response(5s);
    REQUIRE(slow_response);
    CHECK(slow_response->status == 200);
    CHECK(slow_response->body == "first");
    // Drained: its connections closed by portico once their requests ended
    // (idle ones at once), none kept in the pool.
    CHECK(UpstreamServer::wait_until([&] { return first.connections_open() == 0; }, 5s));
    CHECK(first.connections_closed_by_peer() == first.connections_accepted());

    flow.stop();
    CHECK(flow.failures() == 0);
    // The counters are the name's, whatever its addresses: one series.
    size_t total = first.request_count() + second.request_count();
    std::string series =
        "portico_upstream_requests_total{upstream=\"app\",server=\"" + server + "\"}";
    CHECK(sample(scrape_when(metrics, series, static_cast<double>(total)), series) ==
          static_cast<double>(total));
}

TEST_CASE("resolve: a failed lookup keeps the last addresses and is logged once",
          "[proxy][resolve]") {
    HostsFileEntry hosts(unique_name());
    if (!hosts.writable())
        PORTICO_SKIP("the resolve tests write /etc/hosts, which needs root (CI runs as root)");
    UpstreamServer first(answer_as("first"));
    std::string server = hosts.name() + ":" + std::to_string(first.port());
    hosts.map_to({"127.0.0.1"});
    Portico portico(resolve_config(server));
    RequestFlow flow(portico.port());
    REQUIRE(flow.first_from("first", Clock::now() - 1h, 5s));

    hosts.remove();
    REQUIRE(portico.wait_for_log("cannot resolve", 1, 10s));
    // Several more failed lookups, one line; requests still served.
    auto since = Clock::now();
    std::this_thread::sleep_for(4 * resolve_interval);
    REQUIRE(flow.first_from("first", since, 5s));
    std::string log = portico.log();
    CHECK(log.find("keeping its addresses: 127.0.0.1:" + std::to_string(first.port())) !=
          std::string::npos);
    CHECK(log.find("cannot resolve") == log.rfind("cannot resolve"));

    hosts.map_to({"127.0.0.1"});
    REQUIRE(portico.wait_for_log("the name resolves again", 1, 5s));
    CHECK(flow.failures() == 0);
}

TEST_CASE("without resolve, a name is looked up at load and on reload, never between",
          "[proxy][resolve]") {
    HostsFileEntry hosts(unique_name());
    if (!hosts.writable())
        PORTICO_SKIP("the resolve tests write /etc/hosts, which needs root (CI runs as root)");
    UpstreamServer first(answer_as("first"), 0, "127.0.0.2");
    UpstreamServer second(answer_as("second"), first.port(), "127.0.0.3");
    hosts.map_to({"127.0.0.2"});
    Portico portico(proxy_config({hosts.name() + ":" + std::to_string(first.port())}, ""));
    RequestFlow flow(portico.port());
    REQUIRE(flow.first_from("first", Clock::now() - 1h, 5s));

    // The name moves: the workers keep the address they were given.
    hosts.map_to({"127.0.0.3"});
    auto moved_at = Clock::now();
    std::this_thread::sleep_for(1500ms);
    for (const auto& answer : flow.answers())
        if (answer.sent >= moved_at) CHECK(answer.body == "first");

    // A reload looks it up again.
    portico.signal(SIGHUP);
    REQUIRE(portico.wait_for_log("reloaded:", 1, 5s));
    auto reloaded_at = Clock::now();
    REQUIRE(flow.first_from("second", reloaded_at, 5s));
    flow.stop();
    CHECK(flow.failures() == 0);
}
