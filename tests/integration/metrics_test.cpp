// The counters on the real binary: requests across two workers to a static,
// a proxied and a fixed location, read back through /metrics and /stats,
// reset, kept across a worker crash and a reload, and checked by promtool.
#include <catch2/catch.hpp>

#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <atomic>
#include <memory>
#include <fstream>
#include <thread>

#include "harness.hpp"
#include "metrics_support.hpp"
#include "proxy_support.hpp"
#include "skip.hpp"
#include "upstream_server.hpp"

using namespace portico::test;

namespace {

struct MeteredSite {
    TempDir dir;
    std::string file = std::string(20000, 'f');  // over 16 KiB: sent with sendfile
    UpstreamServer upstream;
    MeteredSite() { dir.write("www/file.txt", file); }
    std::string config() const {
        return R"(
[server]
listen = ["{listen}"]
workers = 2

[metrics]
listen = "127.0.0.1:0"

[upstream.app]
servers = [")" + upstream.address() + R"("]

[[location]]
name = "static"
prefix = "/file"
root = ")" + dir.path() + R"(/www"

[[location]]
name = "fixed \"quoted\" \\ name"
exact = "/fixed"
respond = { status = 201, body = "made\n" }

[[location]]
name = "app"
prefix = "/"
proxy = "app"
)";
    }
};

void send_requests(uint16_t port, int count) {
    for (int i = 0; i < count; ++i) {
        auto file = fetch(port, "/file.txt");
        auto fixed = fetch(port, "/fixed");
        auto proxied = fetch(port, "/api?i=" + std::to_string(i));
        REQUIRE(file);
        REQUIRE(fixed);
        REQUIRE(proxied);
        REQUIRE(file->status == 200);
        REQUIRE(fixed->status == 201);
        REQUIRE(proxied->status == 200);
    }
}

const std::string fixed_label = "location=\"fixed \\\"quoted\\\" \\\\ name\"";

}  // namespace

TEST_CASE("counters add up requests across two workers, per location and status", "[metrics]") {
    MeteredSite site;
    Portico portico(site.config());
    REQUIRE(portico.wait_for_log("worker 1: started"));
    const int n = 30;
    send_requests(portico.port(), n);
    // The proxied request is the last of each round: when it is in, all are.
    std::string text = scrape_when(metrics_port(portico),
                                   "portico_requests_total{location=\"app\",code=\"200\"}", n);

    CHECK(sample(text, "portico_requests_total{location=\"static\",code=\"200\"}") == n);
    CHECK(sample(text, "portico_requests_total{" + fixed_label + ",code=\"201\"}") == n);
    CHECK(sample(text, "portico_requests_total{location=\"app\",code=\"200\"}") == n);
    CHECK(sample(text, "portico_connections_accepted_total") == 3 * n);
    // Every request is in its histogram; the overhead is part of the request time.
    for (std::string location : {"location=\"static\"", fixed_label.c_str(), "location=\"app\""})
        CHECK(sample(text, "portico_request_duration_seconds_count{" + location + "}") == n);
    CHECK(sample(text, "portico_upstream_duration_seconds_count{location=\"app\"}") == n);
    CHECK(sample(text, "portico_proxy_overhead_seconds_count{location=\"app\"}") == n);
    double request_sum = sample(text, "portico_request_duration_seconds_sum{location=\"app\"}");
    double overhead_sum = sample(text, "portico_proxy_overhead_seconds_sum{location=\"app\"}");
    CHECK(overhead_sum > 0);
    CHECK(overhead_sum <= request_sum);
    CHECK(sample(text, "portico_sendfile_bytes_total{location=\"static\"}") == n * 20000.0);
    std::string server = "upstream=\"app\",server=\"" + site.upstream.address() + "\"";
    double opened = sample(text, "portico_upstream_connections_opened_total{" + server + "}");
    double reused = sample(text, "portico_upstream_connections_reused_total{" + server + "}");
    // Two workers, each with its own pool: at most a connection or two each.
    CHECK(opened >= 1);
    CHECK(opened <= 4);
    CHECK(opened + reused == n);
    CHECK(site.upstream.connections_accepted() == static_cast<size_t>(opened));

    // /stats says the same in JSON.
    std::string stats = scrape(metrics_port(portico), "/stats");
    CHECK(stats.find("\"p99\"") != std::string::npos);
    CHECK(stats.find("\"app\"") != std::string::npos);
}

TEST_CASE("POST /stats/reset zeroes the counters", "[metrics]") {
    MeteredSite site;
    Portico portico(site.config());
    send_requests(portico.port(), 5);
    uint16_t port = metrics_port(portico);
    const std::string app = "portico_requests_total{location=\"app\",code=\"200\"}";
    REQUIRE(sample(scrape_when(port, app, 5), app) == 5);
    Client client(port);
    client.send("POST /stats/reset HTTP/1.1\r\nHost: m\r\n\r\n");
    auto response = client.read_response();
    REQUIRE(response);
    CHECK(response->status == 204);
    std::string text = scrape(port);
    // Counters of a reset slot read as zero (and zero request codes are left out).
    double after_reset = sample(text, app);
    CHECK((after_reset == -1 || after_reset == 0));
    CHECK(sample(text, "portico_request_duration_seconds_count{location=\"app\"}") == 0);
    send_requests(portico.port(), 2);
    CHECK(sample(scrape_when(port, app, 2), app) == 2);
}

TEST_CASE("totals survive a worker crash and a reload", "[metrics]") {
    MeteredSite site;
    Portico portico(site.config());
    REQUIRE(portico.wait_for_log("worker 1: started"));
    send_requests(portico.port(), 10);
    uint16_t port = metrics_port(portico);
    const std::string app = "portico_requests_total{location=\"app\",code=\"200\"}";
    // Let the last request land in the counters before the kill.
    REQUIRE(sample(scrape_when(port, app, 10), app) == 10);
    ::kill(portico.worker_pids().front(), SIGKILL);
    REQUIRE(portico.wait_for_log("started worker", 3));
    std::string text = scrape(port);
    CHECK(sample(text, "portico_worker_restarts_total") == 1);
    CHECK(sample(text, "portico_requests_total{location=\"app\",code=\"200\"}") == 10);

    portico.signal(SIGHUP);
    REQUIRE(portico.wait_for_log("reloaded"));
    send_requests(portico.port(), 3);
    text = scrape_when(port, app, 13);
    CHECK(sample(text, "portico_config_reloads_total{result=\"ok\"}") == 1);
    CHECK(sample(text, app) == 13);
}

TEST_CASE("/healthz answers 200 while workers accept, and unknown paths 404", "[metrics]") {
    MeteredSite site;
    Portico portico(site.config());
    uint16_t port = metrics_port(portico);
    auto health = fetch(port, "/healthz");
    REQUIRE(health);
    CHECK(health->status == 200);
    auto missing = fetch(port, "/nothing");
    REQUIRE(missing);
    CHECK(missing->status == 404);
}

// The master serves the metrics listener beside its signals and worker
// restarts: a client that drips its request, or a crowd that sends
// nothing, must not hold it up. With blocking reads (1 s per recv) 20 idle
// connections delayed /healthz by 20 s, and a killed worker's restart by
// as long.
TEST_CASE("slow and idle metrics clients never hold up the master: /healthz and worker restarts",
          "[metrics][bad-input]") {
    MeteredSite site;
    Portico portico(site.config());
    uint16_t port = metrics_port(portico);
    REQUIRE(portico.wait_for_log("worker 1: started"));
    std::vector<std::unique_ptr<Client>> idle;
    for (int i = 0; i < 20; ++i) idle.push_back(std::make_unique<Client>(port));
    Client dripping(port);
    std::atomic<bool> stop{false};
    std::thread drip([&] {
        const std::string request = "GET /healthz HTTP/1.1\r\nHost: m\r\n";
        for (size_t i = 0; i < request.size() && !stop; ++i) {
            dripping.send(request.substr(i, 1));
            std::this_thread::sleep_for(100ms);
        }
    });
    std::this_thread::sleep_for(300ms);  // the master has seen them all

    auto start = std::chrono::steady_clock::now();
    auto health = fetch(port, "/healthz");
    REQUIRE(health);
    CHECK(health->status == 200);
    CHECK(ms_since(start) < 500);

    std::vector<pid_t> before = portico.worker_pids();
    REQUIRE(before.size() == 2);
    start = std::chrono::steady_clock::now();
    ::kill(before[0], SIGKILL);
    REQUIRE(portico.wait_for_log("started worker", 3, 3s));
    CHECK(ms_since(start) < 1500);
    auto response = fetch(portico.port(), "/fixed");
    REQUIRE(response);
    CHECK(response->status == 201);

    // A request must arrive whole within the deadline (5 s): the idle crowd
    // and the dripping client are closed by then.
    CHECK(idle.front()->closed_by_server(7s));
    CHECK(dripping.closed_by_server(3s));
    stop = true;
    drip.join();
    health = fetch(port, "/healthz");
    REQUIRE(health);
    CHECK(health->status == 200);
}

TEST_CASE("/metrics passes promtool check metrics", "[metrics][promtool]") {
    if (std::system("command -v promtool >/dev/null 2>&1") != 0)
        PORTICO_SKIP("promtool not installed (Debian package prometheus)");
    MeteredSite site;
    Portico portico(site.config());
    send_requests(portico.port(), 3);
    std::string path = portico.dir().write("metrics.txt", scrape(metrics_port(portico)));
    std::string command = "promtool check metrics < " + path + " > " + path + ".out 2>&1";
    int status = std::system(command.c_str());
    std::ifstream out(path + ".out");
    std::string report((std::istreambuf_iterator<char>(out)), std::istreambuf_iterator<char>());
    INFO(report);
    CHECK(status == 0);
}

TEST_CASE("the access log carries the timings, and SIGUSR1 reopens a moved file", "[metrics][access-log]") {
    MeteredSite site;
    std::string config = site.config();
    config.replace(config.find("[metrics]"), 0,
                   "[log]\naccess = \"" + site.dir.path() + "/access.log\"\n\n");
    Portico portico(config);
    send_requests(portico.port(), 2);
    std::string log_path = site.dir.path() + "/access.log";
    auto read_log = [](const std::string& path) {
        std::ifstream in(path);
        return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    };
    // Written by each worker's own thread, flushed at least once a second.
    REQUIRE(UpstreamServer::wait_until([&] {
        std::string text = read_log(log_path);
        return std::count(text.begin(), text.end(), '\n') >= 6;
    }, 5s));
    std::string text = read_log(log_path);
    std::string proxied = text.substr(text.find("\"GET /api?i=0 HTTP/1.1\" 200"));
    proxied = proxied.substr(0, proxied.find('\n'));
    INFO(proxied);
    CHECK(proxied.find(" rt=0.") != std::string::npos);
    CHECK(proxied.find(" urt=0.") != std::string::npos);
    CHECK(proxied.find(" loc=\"app\"") != std::string::npos);
    std::string file_line = text.substr(text.find("\"GET /file.txt HTTP/1.1\" 200 20000"));
    file_line = file_line.substr(0, file_line.find('\n'));
    INFO(file_line);
    CHECK(file_line.find(" urt=- uct=-") != std::string::npos);
    CHECK(file_line.find(" loc=\"static\"") != std::string::npos);

    // logrotate: move the file away, signal, and new lines go to a new file.
    REQUIRE(std::rename(log_path.c_str(), (log_path + ".1").c_str()) == 0);
    portico.signal(SIGUSR1);
    REQUIRE(portico.wait_for_log("log files reopened"));
    std::this_thread::sleep_for(200ms);  // the workers get the signal from the master
    send_requests(portico.port(), 1);
    CHECK(UpstreamServer::wait_until([&] {
        return read_log(log_path).find("GET /api?i=0") != std::string::npos;
    }, 5s));
}
