// A/B snapshots: what a snapshot counts, the bound on how many are kept,
// and the arithmetic of a comparison (rates, percentiles, ratios, totals).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "metrics/compare.hpp"
#include "metrics/render.hpp"
#include "metrics/saved_snapshots.hpp"
#include "durations.hpp"

using namespace portico::metrics;
using nlohmann::json;

namespace {

// `requests` requests of `duration_ns` each; proxied ones spend all but
// `overhead_ns` upstream.
LocationSnapshot location(const std::string& name, int status, uint64_t requests,
                          uint64_t duration_ns, std::optional<uint64_t> overhead_ns = {}) {
    LocationSnapshot location{.name = name};
    HistogramSlot request, overhead;
    for (uint64_t i = 0; i < requests; ++i) {
        request.record(duration_ns);
        if (overhead_ns) overhead.record(*overhead_ns);
    }
    location.responses[status_slot(status)] = requests;
    location.request_duration.add(request);
    location.proxy_overhead.add(overhead);
    return location;
}

Snapshot counters(std::vector<LocationSnapshot> locations) {
    Snapshot snapshot;
    snapshot.locations = std::move(locations);
    return snapshot;
}

const LocationComparison& row(const Comparison& comparison, const std::string& name) {
    for (const LocationComparison& row : comparison.locations)
        if (row.name == name) return row;
    FAIL("no row " << name);
    return comparison.total;
}

size_t measure(std::string_view key) {
    for (size_t i = 0; i < compared_measures.size(); ++i)
        if (compared_measures[i].key == key) return i;
    FAIL("no measure " << key);
    return 0;
}

}  // namespace

TEST_CASE("snapshot names are 1..64 of [A-Za-z0-9._-]", "[metrics][snapshot]") {
    CHECK(valid_snapshot_name("proxy"));
    CHECK(valid_snapshot_name("run-2.static_B"));
    CHECK(valid_snapshot_name(std::string(64, 'a')));
    CHECK_FALSE(valid_snapshot_name(std::string(65, 'a')));
    CHECK_FALSE(valid_snapshot_name(""));
    for (const char* bad : {"a b", "a/b", "a%20b", "a&b=c", "é", "a\nb", "a?"})
        CHECK_FALSE(valid_snapshot_name(bad));
}

TEST_CASE("a snapshot counts the time since the last reset", "[metrics][snapshot]") {
    SavedSnapshots snapshots(100 * second);
    auto first = snapshots.save("start", counters({}), 110 * second, 0);
    CHECK(first.snapshot.counted_ns == 10 * second);  // since the start
    snapshots.counters_reset(200 * second);
    auto second_run = snapshots.save("run", counters({}), 230 * second, 0);
    CHECK(second_run.snapshot.counted_ns == 30 * second);
    CHECK_FALSE(second_run.replaced);
    CHECK_FALSE(second_run.dropped);
}

TEST_CASE("past the bound the oldest snapshot is dropped, and said so", "[metrics][snapshot]") {
    SavedSnapshots snapshots(0);
    for (size_t i = 0; i < SavedSnapshots::capacity; ++i)
        CHECK_FALSE(snapshots.save("s" + std::to_string(i), counters({}), second, 0).dropped);
    auto saved = snapshots.save("one-more", counters({}), second, 0);
    REQUIRE(saved.dropped);
    CHECK(*saved.dropped == "s0");
    CHECK(snapshots.all().size() == SavedSnapshots::capacity);
    CHECK(snapshots.find("s0") == nullptr);
    CHECK(snapshots.find("s1") != nullptr);
    CHECK(snapshots.all().back().name == "one-more");

    // Saving a name again replaces it (the newest now), and drops nothing.
    auto again = snapshots.save("s1", counters({location("app", 200, 3, ms)}), 2 * second, 0);
    CHECK(again.replaced);
    CHECK_FALSE(again.dropped);
    CHECK(snapshots.all().size() == SavedSnapshots::capacity);
    CHECK(snapshots.all().back().name == "s1");
    CHECK(snapshots.find("s1")->counters.locations.at(0).requests() == 3);
    CHECK(snapshots.all().front().name == "s2");

    std::string rendered = render_snapshot_saved_json(snapshots.save("x", counters({}), 0, 0));
    json document = json::parse(rendered);
    CHECK(document["dropped"] == "s2");
    CHECK(document["replaced"] == false);
}

TEST_CASE("compare: req/s over the counted time, percentiles, ratio B / A", "[metrics][snapshot]") {
    SavedSnapshots snapshots(0);
    // A: 1000 proxied requests of 2 ms (overhead 100 us) in 10 s.
    const SavedSnapshot& a =
        snapshots
            .save("proxy", counters({location("app", 200, 1000, 2 * ms, 100 * us)}), 10 * second,
                  1'700'000'000'000)
            .snapshot;
    // B: 4000 requests of 500 us in 20 s, answered from disk: no overhead.
    snapshots.counters_reset(100 * second);
    const SavedSnapshot& b = snapshots
                                 .save("static", counters({location("app", 200, 4000, 500 * us)}),
                                       120 * second, 1'700'000'100'000)
                                 .snapshot;
    Comparison comparison = compare(a, b);
    REQUIRE(comparison.locations.size() == 1);
    const LocationComparison& app = row(comparison, "app");

    CHECK(app.a[measure("requests")] == 1000);
    CHECK(app.b[measure("requests")] == 4000);
    CHECK(*app.a[measure("per_second")] == Approx(100.0));
    CHECK(*app.b[measure("per_second")] == Approx(200.0));
    CHECK(*ratio(app.a[measure("per_second")], app.b[measure("per_second")]) == Approx(2.0));
    // 2 ms is a bucket bound: p50 interpolates inside (1.5 ms, 2 ms], at most the max.
    CHECK(*app.a[measure("request_p50")] > 0.0015);
    CHECK(*app.a[measure("request_p50")] <= 0.002);
    CHECK(*app.b[measure("request_p99")] <= 0.0005);
    CHECK(*app.a[measure("overhead_p99")] <= 0.0001);
    // No overhead from disk: nothing to say, and so no ratio.
    CHECK_FALSE(app.b[measure("overhead_p50")]);
    CHECK_FALSE(ratio(app.a[measure("overhead_p50")], app.b[measure("overhead_p50")]));
    CHECK(app.a[measure("5xx")] == 0);
    CHECK_FALSE(ratio(app.a[measure("5xx")], app.b[measure("5xx")]));  // 0 / 0

    json document = json::parse(render_compare_json(comparison));
    CHECK(document["a"]["name"] == "proxy");
    CHECK(document["a"]["taken_at"] == "2023-11-14T22:13:20Z");
    CHECK(document["a"]["seconds"] == 10);
    CHECK(document["b"]["seconds"] == 20);
    CHECK(document["b"]["requests"] == 4000);
    CHECK(document["measures"].size() == compared_measures.size());
    CHECK(document["measures"][3]["unit"] == "seconds");
    const json& location = document["locations"][0];
    CHECK(location["name"] == "app");
    CHECK(location["a"]["per_second"] == 100);
    CHECK(location["ratio"]["requests"] == 4);
    CHECK(location["b"]["overhead_p50"].is_null());
    CHECK(location["ratio"]["overhead_p50"].is_null());
}

TEST_CASE("compare: locations of either run, the total, unused ones left out",
          "[metrics][snapshot]") {
    SavedSnapshots snapshots(0);
    // The seed experiment: proxy-only has one location, the static config
    // answers the files from another; "-" and an idle location stay out.
    const SavedSnapshot& a =
        snapshots
            .save("proxy",
                  counters({location("-", 200, 0, 0), location("app", 200, 300, 4 * ms, 50 * us),
                            location("idle", 200, 0, 0)}),
                  10 * second, 0)
            .snapshot;
    const SavedSnapshot& b = snapshots
                                 .save("static",
                                       counters({location("-", 404, 2, 100 * us),
                                                 location("app", 502, 100, 4 * ms, 50 * us),
                                                 location("assets", 200, 500, 300 * us)}),
                                       20 * second, 0)
                                 .snapshot;
    Comparison comparison = compare(a, b);
    std::vector<std::string> names;
    for (const LocationComparison& row : comparison.locations) names.push_back(row.name);
    // In A's order ("-" is used by B only, but A lists it first), then B's own.
    CHECK(names == std::vector<std::string>{"-", "app", "assets"});

    const LocationComparison& assets = row(comparison, "assets");
    CHECK(assets.a[measure("requests")] == 0);  // absent from A: no requests
    CHECK(assets.a[measure("per_second")] == 0);
    CHECK_FALSE(assets.a[measure("request_p50")]);
    CHECK_FALSE(ratio(assets.a[measure("requests")], assets.b[measure("requests")]));
    CHECK(row(comparison, "app").b[measure("5xx")] == 100);

    const LocationComparison& total = comparison.total;
    CHECK(total.name == "total");
    CHECK(total.a[measure("requests")] == 300);
    CHECK(total.b[measure("requests")] == 602);
    CHECK(*total.a[measure("per_second")] == Approx(30.0));
    CHECK(*total.b[measure("per_second")] == Approx(30.1));
    CHECK(total.b[measure("5xx")] == 100);
    CHECK(*ratio(total.a[measure("requests")], total.b[measure("requests")]) ==
          Approx(602.0 / 300.0));
}

TEST_CASE("compare: a snapshot taken at the reset counts no time, so no rate",
          "[metrics][snapshot]") {
    SavedSnapshots snapshots(5 * second);
    const SavedSnapshot& empty = snapshots.save("now", counters({}), 5 * second, 0).snapshot;
    Comparison comparison = compare(empty, empty);
    CHECK(comparison.locations.empty());
    CHECK_FALSE(comparison.total.a[measure("per_second")]);
    CHECK(comparison.total.a[measure("requests")] == 0);
    json document = json::parse(render_compare_json(comparison));
    CHECK(document["total"]["a"]["per_second"].is_null());
    CHECK(document["locations"].empty());
}
