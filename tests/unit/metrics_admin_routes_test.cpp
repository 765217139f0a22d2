// What the metrics listener answers, without a socket: every route, the
// dashboard's files, and the refusals (404, 405 with Allow, 400 for a bad
// snapshot name, 404 for an unknown one).
#include <catch2/catch.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "config/config.hpp"
#include "metrics/admin_routes.hpp"

using namespace portico::metrics;
using nlohmann::json;

namespace {

struct Listener {
    portico::config::Config config;
    std::unique_ptr<SharedCounters> counters;
    SavedSnapshots snapshots{0};
    bool healthy = true;
    AdminContext context;
    std::unique_ptr<WorkerCounters> worker;

    Listener() : counters(create()), context{*counters, snapshots, [this] { return healthy; }} {
        worker = std::make_unique<WorkerCounters>(
            counters->attach(counters->lease_slot(0).slot, config));
    }
    std::unique_ptr<SharedCounters> create() {
        config.server.workers = 1;
        portico::config::LocationConfig location;
        location.name = "app";
        config.locations.push_back(location);
        std::string error;
        auto made = SharedCounters::create(capacity_for(config), error);
        REQUIRE(made);
        made->register_names(config);
        return made;
    }
    AdminResponse answer(std::string_view method, std::string_view target) {
        size_t question = target.find('?');
        return answer_admin_request(
            {.method = method,
             .path = target.substr(0, question),
             .query = question == std::string_view::npos ? "" : target.substr(question + 1)},
            context);
    }
    void requests(int count) {
        for (int i = 0; i < count; ++i)
            worker->request_finished(0, {.status = 200, .duration_ns = 1'000'000});
    }
};

}  // namespace

TEST_CASE("admin: the counters' routes answer GET, HEAD and POST as listed", "[metrics][admin]") {
    Listener listener;
    listener.requests(2);
    CHECK(listener.answer("GET", "/metrics").body.find("portico_requests_total") !=
          std::string::npos);
    AdminResponse stats = listener.answer("HEAD", "/stats");
    CHECK(stats.status == 200);
    CHECK(stats.content_type == "application/json");
    CHECK(json::parse(stats.body)["totals"]["requests"] == 2);
    CHECK(listener.answer("GET", "/healthz").status == 200);
    listener.healthy = false;
    CHECK(listener.answer("GET", "/healthz").status == 503);
    CHECK(listener.answer("POST", "/stats/reset").status == 204);
    CHECK(json::parse(listener.answer("GET", "/stats").body)["totals"]["requests"] == 0);
}

TEST_CASE("admin: unknown paths 404, wrong methods 405 with Allow", "[metrics][admin]") {
    Listener listener;
    for (const char* path :
         {"/nope", "/stats/", "/metrics/x", "/STATS", "/dashboard.jsx", "/../etc"})
        CHECK(listener.answer("GET", path).status == 404);

    AdminResponse post_stats = listener.answer("POST", "/stats");
    CHECK(post_stats.status == 405);
    CHECK(post_stats.headers == "Allow: GET, HEAD\r\n");
    AdminResponse get_reset = listener.answer("GET", "/stats/reset");
    CHECK(get_reset.status == 405);
    CHECK(get_reset.headers == "Allow: POST\r\n");
    CHECK(listener.answer("GET", "/stats/snapshot?name=a").status == 405);
    CHECK(listener.answer("DELETE", "/stats/snapshots").status == 405);
    CHECK(listener.answer("PUT", "/stats/compare?a=x&b=y").status == 405);
    CHECK(listener.answer("POST", "/").status == 405);
    CHECK(listener.answer("POST", "/").headers == "Allow: GET, HEAD\r\n");
}

TEST_CASE("admin: the dashboard's files, typed, with a policy that keeps them local",
          "[metrics][admin]") {
    Listener listener;
    AdminResponse page = listener.answer("GET", "/");
    CHECK(page.status == 200);
    CHECK(page.content_type == "text/html; charset=utf-8");
    CHECK(page.body.find("<script type=\"module\" src=\"main.js\"></script>") != std::string::npos);
    CHECK(page.headers.find("Content-Security-Policy: default-src 'none'; script-src 'self';") !=
          std::string::npos);
    CHECK(listener.answer("HEAD", "/").status == 200);
    // The query does not change which file: a cache-busting "?v=2" is fine.
    CHECK(listener.answer("GET", "/?v=2").body == page.body);

    AdminResponse script = listener.answer("GET", "/main.js");
    CHECK(script.status == 200);
    CHECK(script.content_type == "text/javascript; charset=utf-8");
    CHECK(listener.answer("GET", "/dashboard.css").content_type == "text/css; charset=utf-8");
    CHECK(listener.answer("GET", "/favicon.svg").content_type == "image/svg+xml");
    // Everything the page names is served (it loads nothing from elsewhere).
    for (const char* file :
         {"/dashboard.css", "/favicon.svg", "/main.js", "/charts.js", "/compare.js", "/dom.js",
          "/format.js", "/history.js", "/live.js", "/certificates.js"})
        CHECK(listener.answer("GET", file).status == 200);
}

TEST_CASE("admin: snapshots saved, listed and compared", "[metrics][admin][snapshot]") {
    Listener listener;
    listener.requests(3);
    AdminResponse saved = listener.answer("POST", "/stats/snapshot?name=before");
    CHECK(saved.status == 201);
    CHECK(json::parse(saved.body)["saved"]["requests"] == 3);
    CHECK(listener.answer("POST", "/stats/reset").status == 204);
    listener.requests(5);
    CHECK(listener.answer("POST", "/stats/snapshot?x=1&name=after").status == 201);

    json list = json::parse(listener.answer("GET", "/stats/snapshots").body);
    CHECK(list["capacity"] == SavedSnapshots::capacity);
    REQUIRE(list["snapshots"].size() == 2);
    CHECK(list["snapshots"][0]["name"] == "before");
    CHECK(list["snapshots"][1]["requests"] == 5);

    AdminResponse compared = listener.answer("GET", "/stats/compare?a=before&b=after");
    CHECK(compared.status == 200);
    json document = json::parse(compared.body);
    CHECK(document["total"]["a"]["requests"] == 3);
    CHECK(document["total"]["b"]["requests"] == 5);
    CHECK(document["locations"][0]["name"] == "app");
}

TEST_CASE("admin: bad snapshot names 400, unknown ones 404", "[metrics][admin][snapshot]") {
    Listener listener;
    std::string too_long(65, 'n');
    for (std::string target : std::vector<std::string>{
             "/stats/snapshot", "/stats/snapshot?name=", "/stats/snapshot?name=a%20b",
             "/stats/snapshot?name=a/b", "/stats/snapshot?name=" + too_long,
             "/stats/snapshot?other=x"}) {
        AdminResponse answer = listener.answer("POST", target);
        INFO(target);
        CHECK(answer.status == 400);
        CHECK(answer.body.find("1 to 64 of A-Z a-z 0-9 . _ -") != std::string::npos);
    }
    // A refusal quotes at most 80 characters of what it was sent.
    std::string novel(1000, 'x');
    CHECK(listener.answer("POST", "/stats/snapshot?name=" + novel).body.size() < 200);
    CHECK(listener.answer("GET", "/stats/snapshots").body.find("\"snapshots\":[]") !=
          std::string::npos);

    CHECK(listener.answer("POST", "/stats/snapshot?name=" + std::string(64, 'n')).status == 201);
    CHECK(listener.answer("GET", "/stats/compare?a=x").status == 400);
    CHECK(listener.answer("GET", "/stats/compare?a=bad!&b=x").status == 400);
    AdminResponse unknown =
        listener.answer("GET", "/stats/compare?a=" + std::string(64, 'n') + "&b=ghost");
    CHECK(unknown.status == 404);
    CHECK(unknown.body.find("no snapshot named 'ghost' (saved: nnnn") != std::string::npos);
}

TEST_CASE("admin: query values, first of a repeated key, undecoded", "[metrics][admin]") {
    CHECK(query_value("a=1&b=2", "b") == "2");
    CHECK(query_value("a=1&a=2", "a") == "1");
    CHECK(query_value("ab=1&a=", "a") == "");
    CHECK(query_value("a", "a") == "");
    CHECK_FALSE(query_value("", "a"));
    CHECK_FALSE(query_value("b=1", "a"));
    CHECK(query_value("name=a%2Fb", "name") == "a%2Fb");
}

TEST_CASE("admin: cache purge by key or prefix, decoded, and 400 without either or with a bad one",
          "[metrics][admin][cache]") {
    Listener listener;
    CHECK(listener.answer("POST", "/cache/purge?key=a").status == 404);  // no zone
    std::vector<std::pair<std::string, bool>> asked;
    listener.context.purge_cache = [&](std::string_view key, bool prefix) {
        asked.emplace_back(std::string(key), prefix);
        return size_t{3};
    };
    AdminResponse purged = listener.answer("POST", "/cache/purge?key=httpa.example%2Fx%3Fy=1");
    CHECK(purged.status == 200);
    CHECK(purged.body == "{\"purged\": 3}");
    CHECK(listener.answer("POST", "/cache/purge?prefix=httpa.example/").status == 200);
    REQUIRE(asked.size() == 2);
    CHECK(asked[0] == std::pair<std::string, bool>{"httpa.example/x?y=1", false});
    CHECK(asked[1] == std::pair<std::string, bool>{"httpa.example/", true});
    for (const char* bad : {"/cache/purge", "/cache/purge?key=", "/cache/purge?key=a%2",
                            "/cache/purge?key=%zz", "/cache/purge?key=a&prefix=b"})
        CHECK(listener.answer("POST", bad).status == 400);
    CHECK(asked.size() == 2);
    CHECK(listener.answer("GET", "/cache/purge?key=a").status == 405);
}
