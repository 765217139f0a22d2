// The dashboard and the A/B snapshots on the real binary: the page and its
// policy, runs saved and compared across a reload, the bound on how many
// are kept, and bad input on the metrics listener.
#include <signal.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "harness.hpp"
#include "metrics_support.hpp"

using namespace portico::test;
using nlohmann::json;

namespace {

struct SnapshotSite {
    TempDir dir;
    SnapshotSite() { dir.write("www/file.txt", "from disk\n"); }
    std::string config() const {
        return R"(
[server]
listen = ["{listen}"]
workers = 2

[metrics]
listen = "127.0.0.1:0"

[[location]]
name = "files"
prefix = "/file"
root = ")" + dir.path() +
               R"(/www"

[[location]]
name = "fixed"
exact = "/fixed"
respond = { status = 200, body = "ok\n" }
)";
    }
};

Response ask(uint16_t port, const std::string& method, const std::string& target) {
    Client client(port);
    client.send(method + " " + target + " HTTP/1.1\r\nHost: metrics\r\nContent-Length: 0\r\n\r\n");
    auto response = client.read_response(5s, method == "HEAD");
    REQUIRE(response);
    return *response;
}

// `count` requests to `path`, then the wait until the counters have them.
void run(uint16_t port, uint16_t metrics, const std::string& path, const std::string& location,
         int count) {
    for (int i = 0; i < count; ++i) {
        auto response = fetch(port, path);
        REQUIRE(response);
        REQUIRE(response->status == 200);
    }
    std::string series = "portico_requests_total{location=\"" + location + "\",code=\"200\"}";
    REQUIRE(sample(scrape_when(metrics, series, count), series) == count);
}

json saved(uint16_t metrics, const std::string& name) {
    Response response = ask(metrics, "POST", "/stats/snapshot?name=" + name);
    REQUIRE(response.status == 201);
    return json::parse(response.body);
}

}  // namespace

TEST_CASE("A/B snapshots: reset, run, save, then compared after a reload", "[metrics][snapshot]") {
    SnapshotSite site;
    Portico portico(site.config());
    REQUIRE(portico.wait_for_log("worker 1: started"));
    uint16_t metrics = metrics_port(portico);

    REQUIRE(ask(metrics, "POST", "/stats/reset").status == 204);
    run(portico.port(), metrics, "/file.txt", "files", 10);
    CHECK(saved(metrics, "disk")["saved"]["requests"] == 10);
    REQUIRE(ask(metrics, "POST", "/stats/reset").status == 204);
    run(portico.port(), metrics, "/fixed", "fixed", 6);
    json second = saved(metrics, "respond");
    CHECK(second["saved"]["requests"] == 6);
    CHECK(second["saved"]["seconds"] > 0);
    CHECK(second["dropped"].is_null());

    // The snapshots live in the master: a reload keeps them.
    portico.signal(SIGHUP);
    REQUIRE(portico.wait_for_log("reloaded"));
    json comparison = json::parse(scrape(metrics, "/stats/compare?a=disk&b=respond"));
    CHECK(comparison["a"]["name"] == "disk");
    CHECK(comparison["total"]["a"]["requests"] == 10);
    CHECK(comparison["total"]["b"]["requests"] == 6);
    CHECK(comparison["total"]["b"]["per_second"] > 0);
    CHECK(comparison["total"]["ratio"]["requests"] == Approx(0.6));
    REQUIRE(comparison["locations"].size() == 2);
    CHECK(comparison["locations"][0]["name"] == "files");
    CHECK(comparison["locations"][0]["b"]["requests"] == 0);
    CHECK(comparison["locations"][1]["name"] == "fixed");
}

TEST_CASE("A/B snapshots: past 16 the oldest is dropped, and said so", "[metrics][snapshot]") {
    SnapshotSite site;
    Portico portico(site.config());
    uint16_t metrics = metrics_port(portico);
    for (int i = 0; i < 16; ++i)
        CHECK(saved(metrics, "run" + std::to_string(i))["dropped"].is_null());
    CHECK(saved(metrics, "run16")["dropped"] == "run0");
    // Saving a kept name again replaces it: nothing else goes.
    json again = saved(metrics, "run5");
    CHECK(again["replaced"] == true);
    CHECK(again["dropped"].is_null());
    json list = json::parse(scrape(metrics, "/stats/snapshots"));
    REQUIRE(list["snapshots"].size() == 16);
    CHECK(list["snapshots"][0]["name"] == "run1");
    CHECK(list["snapshots"][15]["name"] == "run5");
    CHECK(portico.wait_for_log("the oldest, 'run0', was dropped (at most 16 are kept)"));
    CHECK(ask(metrics, "GET", "/stats/compare?a=run0&b=run1").status == 404);
}

TEST_CASE("the metrics listener: the dashboard, and bad input refused", "[metrics][snapshot]") {
    SnapshotSite site;
    Portico portico(site.config());
    uint16_t metrics = metrics_port(portico);

    Response page = ask(metrics, "GET", "/");
    CHECK(page.status == 200);
    CHECK(page.header("content-type") == "text/html; charset=utf-8");
    CHECK(page.header("content-security-policy").find("default-src 'none'") != std::string::npos);
    CHECK(page.body.find("<title>portico dashboard</title>") != std::string::npos);
    Response head = ask(metrics, "HEAD", "/");
    CHECK(head.status == 200);
    CHECK(head.header("content-length") == std::to_string(page.body.size()));
    CHECK(head.body.empty());
    CHECK(ask(metrics, "GET", "/main.js").header("content-type") ==
          "text/javascript; charset=utf-8");

    CHECK(ask(metrics, "GET", "/nothing").status == 404);
    Response wrong = ask(metrics, "GET", "/stats/snapshot?name=a");
    CHECK(wrong.status == 405);
    CHECK(wrong.header("allow") == "POST");
    CHECK(ask(metrics, "DELETE", "/stats").header("allow") == "GET, HEAD");
    CHECK(ask(metrics, "POST", "/stats/snapshot?name=" + std::string(65, 'a')).status == 400);
    CHECK(ask(metrics, "POST", "/stats/snapshot?name=a%2Fb").status == 400);
    CHECK(ask(metrics, "POST", "/stats/snapshot").status == 400);
    CHECK(ask(metrics, "GET", "/stats/compare?a=x&b=y").status == 404);
    CHECK(ask(metrics, "GET", "/stats/compare?a=x").status == 400);
    // None of that was saved.
    CHECK(json::parse(scrape(metrics, "/stats/snapshots"))["snapshots"].empty());
}
