#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "config/config.hpp"
#include "metrics/shared_counters.hpp"
#include "durations.hpp"
#include "request_records.hpp"

using namespace portico::metrics;
using portico::config::Config;

using portico::test::proxied_request;

namespace {

Config config_with(std::vector<std::string> locations,
                   std::vector<std::pair<std::string, std::vector<std::string>>> upstreams) {
    Config config;
    config.server.workers = 2;
    for (std::string& name : locations) {
        portico::config::LocationConfig location;
        location.name = std::move(name);
        config.locations.push_back(std::move(location));
    }
    for (auto& [name, servers] : upstreams) {
        portico::config::UpstreamConfig upstream;
        upstream.name = name;
        for (std::string& text : servers) {
            portico::config::SocketAddress address;
            address.text = std::move(text);
            upstream.servers.push_back(std::move(address));
        }
        config.upstreams.push_back(std::move(upstream));
    }
    return config;
}

Config two_locations() {
    return config_with({"/", "assets"}, {{"app", {"127.0.0.1:3000", "127.0.0.1:3001"}}});
}

std::unique_ptr<SharedCounters> region_for(const Config& config) {
    std::string error;
    auto counters = SharedCounters::create(capacity_for(config), error);
    REQUIRE(counters);
    CHECK(counters->register_names(config).empty());
    return counters;
}

RequestRecord from_file(uint64_t bytes) {
    return {.status = 200,
            .response_bytes = bytes + 200,
            .sendfile_bytes = bytes,
            .duration_ns = 1 * ms};
}

}  // namespace

TEST_CASE("a worker's request lands in its location and server entries", "[metrics]") {
    Config config = two_locations();
    auto counters = region_for(config);
    WorkerCounters worker = counters->attach(counters->lease_slot(0).slot, config);
    worker.connection_accepted();
    worker.request_finished(0, proxied_request(200, 5 * ms, 3 * ms));
    worker.request_finished(1, from_file(1000));
    worker.upstream_connected(0, 1, 1 * ms);
    worker.upstream_request_sent(0, 1, false);
    worker.upstream_request_sent(0, 1, true);
    worker.upstream_idle_changed(0, 1, 1);
    worker.upstream_failed(0, 0, UpstreamError::reset);
    worker.upstream_retried();

    Snapshot snapshot = counters->snapshot();
    CHECK(snapshot.connections_accepted == 1);
    CHECK(snapshot.connections_active == 1);
    CHECK(snapshot.upstream_retries == 1);
    REQUIRE(snapshot.locations.size() == 3);
    CHECK(snapshot.locations[0].name == "-");
    const LocationSnapshot& root = snapshot.locations[1];
    CHECK(root.name == "/");
    CHECK(root.responses[status_slot(200)] == 1);
    CHECK(root.request_duration.sum_ns == 5 * ms);
    CHECK(root.upstream_duration.sum_ns == 3 * ms);
    CHECK(root.proxy_overhead.sum_ns == 2 * ms);
    const LocationSnapshot& assets = snapshot.locations[2];
    CHECK(assets.sendfile_bytes == 1000);
    CHECK(assets.response_bytes == 1200);
    CHECK(assets.upstream_duration.count == 0);  // not proxied: no upstream, no overhead
    CHECK(assets.proxy_overhead.count == 0);
    REQUIRE(snapshot.servers.size() == 2);
    const ServerSnapshot& second = snapshot.servers[1];
    CHECK(second.upstream == "app");
    CHECK(second.server == "127.0.0.1:3001");
    CHECK(second.requests == 2);
    CHECK(second.connections_opened == 1);
    CHECK(second.connections_reused == 1);
    CHECK(second.connections_idle == 1);
    CHECK(second.connect_time.count == 1);
    CHECK(snapshot.servers[0].errors[static_cast<size_t>(UpstreamError::reset)] == 1);
    REQUIRE(snapshot.workers.size() == 1);
    CHECK(snapshot.workers[0].requests == 2);
    CHECK(snapshot.workers[0].pid == getpid());
    CHECK(snapshot.workers[0].live);
}

TEST_CASE("a request without a location lands in \"-\", always the first entry", "[metrics]") {
    Config config = two_locations();
    auto counters = region_for(config);
    CHECK(counters->snapshot().locations[0].name == "-");  // before anything is counted
    WorkerCounters worker = counters->attach(counters->lease_slot(0).slot, config);
    worker.request_finished(-1, {.status = 404, .response_bytes = 150, .duration_ns = 1 * ms});
    worker.request_finished(-1, {.status = 400, .response_bytes = 150, .duration_ns = 1 * ms});

    Snapshot snapshot = counters->snapshot();
    const LocationSnapshot& none = snapshot.locations[0];
    CHECK(none.responses[status_slot(404)] == 1);
    CHECK(none.responses[status_slot(400)] == 1);
    CHECK(none.request_duration.count == 2);
    CHECK(none.response_bytes == 300);
    CHECK(snapshot.locations[1].requests() == 0);
    CHECK(snapshot.workers[0].requests == 2);
}

TEST_CASE("an upstream's queue: a gauge of waiting requests and a count of 503s", "[metrics]") {
    Config config = two_locations();
    auto counters = region_for(config);
    unsigned slot = counters->lease_slot(0).slot;
    {
        WorkerCounters worker = counters->attach(slot, config);
        worker.upstream_queue_changed(0, 1);
        worker.upstream_queue_changed(0, 1);
        worker.upstream_queue_changed(0, -1);
        worker.upstream_queue_timed_out(0);
        Snapshot snapshot = counters->snapshot();
        REQUIRE(snapshot.upstreams.size() == 1);
        CHECK(snapshot.upstreams[0].name == "app");
        CHECK(snapshot.upstreams[0].queued == 1);
        CHECK(snapshot.upstreams[0].queue_timeouts == 1);

        counters->reset();
        worker.upstream_queue_changed(0, 1);  // the worker catches up with the reset
        snapshot = counters->snapshot();
        CHECK(snapshot.upstreams[0].queued == 2);  // a gauge: the present survives
        CHECK(snapshot.upstreams[0].queue_timeouts == 0);
    }
    // The process is gone, and its queue with it.
    counters->release_slot(slot);
    CHECK(counters->snapshot().upstreams[0].queued == 0);
}

TEST_CASE("totals are the sum of the worker slots", "[metrics]") {
    Config config = two_locations();
    auto counters = region_for(config);
    SharedCounters::Lease first = counters->lease_slot(0);
    SharedCounters::Lease second = counters->lease_slot(1);
    CHECK(first.slot != second.slot);
    WorkerCounters a = counters->attach(first.slot, config);
    WorkerCounters b = counters->attach(second.slot, config);
    a.connection_accepted();
    b.connection_accepted();
    b.connection_accepted();
    b.connection_closed();
    a.request_finished(0, proxied_request(200, 2 * ms, 1 * ms));
    b.request_finished(0, proxied_request(502, 8 * ms, 7 * ms));

    Snapshot snapshot = counters->snapshot();
    CHECK(snapshot.connections_accepted == 3);
    CHECK(snapshot.connections_active == 2);
    CHECK(snapshot.locations[1].requests() == 2);
    CHECK(snapshot.locations[1].responses[status_slot(502)] == 1);
    CHECK(snapshot.locations[1].request_duration.max_ns == 8 * ms);
    REQUIRE(snapshot.workers.size() == 2);
    CHECK(snapshot.workers[0].requests == 1);
    CHECK(snapshot.workers[1].requests == 1);
}

TEST_CASE("a restarted worker keeps adding to its slot's totals", "[metrics]") {
    Config config = two_locations();
    auto counters = region_for(config);
    unsigned slot = counters->lease_slot(0).slot;
    {
        WorkerCounters crashed = counters->attach(slot, config);
        crashed.connection_accepted();  // never closed: the process died
        crashed.request_finished(0, proxied_request(200, 1 * ms, 1 * ms));
        crashed.upstream_idle_changed(0, 0, 3);
    }
    counters->release_slot(slot);
    CHECK(counters->snapshot().connections_active == 0);  // its connections died with it
    CHECK(counters->snapshot().servers[0].connections_idle == 0);
    CHECK_FALSE(counters->snapshot().workers[0].live);

    counters->count_worker_restart();
    SharedCounters::Lease again = counters->lease_slot(0);
    CHECK(again.slot == slot);
    WorkerCounters restarted = counters->attach(again.slot, config);
    restarted.connection_accepted();
    restarted.request_finished(0, proxied_request(200, 1 * ms, 1 * ms));

    Snapshot snapshot = counters->snapshot();
    CHECK(snapshot.connections_accepted == 2);
    CHECK(snapshot.connections_active == 1);
    CHECK(snapshot.locations[1].requests() == 2);
    CHECK(snapshot.worker_restarts == 1);
    CHECK(snapshot.workers.size() == 1);
}

TEST_CASE("a reload keeps totals by name and adds new names", "[metrics]") {
    Config before = two_locations();
    auto counters = region_for(before);
    unsigned old_slot = counters->lease_slot(0).slot;
    WorkerCounters old_worker = counters->attach(old_slot, before);
    old_worker.request_finished(1, from_file(10));  // "assets"

    // "assets" moves to index 0, "/" is gone, "api" and a server are new.
    Config after = config_with({"assets", "api"}, {{"app", {"127.0.0.1:3001", "10.0.0.1:80"}}});
    CHECK(counters->register_names(after).empty());
    counters->count_config_reload(true);
    SharedCounters::Lease lease = counters->lease_slot(0);  // the old worker still drains
    CHECK(lease.slot != old_slot);
    CHECK_FALSE(lease.shared);
    WorkerCounters new_worker = counters->attach(lease.slot, after);
    new_worker.request_finished(0, from_file(10));
    new_worker.request_finished(1, proxied_request(201, 1 * ms, 1 * ms));
    new_worker.upstream_request_sent(0, 0, false);
    old_worker.request_finished(1, from_file(10));  // a last in-flight request

    Snapshot snapshot = counters->snapshot();
    REQUIRE(snapshot.locations.size() == 4);
    CHECK(snapshot.locations[1].name == "/");
    CHECK(snapshot.locations[2].name == "assets");
    CHECK(snapshot.locations[2].requests() == 3);
    CHECK(snapshot.locations[3].name == "api");
    CHECK(snapshot.locations[3].responses[status_slot(201)] == 1);
    REQUIRE(snapshot.servers.size() == 3);
    CHECK(snapshot.servers[1].server == "127.0.0.1:3001");
    CHECK(snapshot.servers[1].requests == 1);
    CHECK(snapshot.config_reloads_ok == 1);
}

TEST_CASE("reset zeroes every counter but keeps the gauges", "[metrics]") {
    Config config = two_locations();
    auto counters = region_for(config);
    unsigned busy_slot = counters->lease_slot(0).slot;
    unsigned idle_slot = counters->lease_slot(1).slot;
    WorkerCounters busy = counters->attach(busy_slot, config);
    WorkerCounters idle = counters->attach(idle_slot, config);
    busy.connection_accepted();
    busy.request_finished(0, proxied_request(200, 1 * ms, 1 * ms));
    busy.upstream_idle_changed(0, 0, 2);
    idle.connection_accepted();
    idle.request_finished(1, from_file(5));
    counters->count_config_reload(false);
    counters->count_worker_restart();

    counters->reset();
    // Nobody has recorded since: the stale slots read as zero.
    Snapshot zeroed = counters->snapshot();
    CHECK(zeroed.connections_accepted == 0);
    CHECK(zeroed.locations[1].requests() == 0);
    CHECK(zeroed.locations[1].request_duration.count == 0);
    CHECK(zeroed.locations[2].sendfile_bytes == 0);
    CHECK(zeroed.config_reloads_failed == 0);
    CHECK(zeroed.worker_restarts == 0);
    CHECK(zeroed.connections_active == 2);
    CHECK(zeroed.servers[0].connections_idle == 2);

    busy.request_finished(0, proxied_request(200, 1 * ms, 1 * ms));
    Snapshot after = counters->snapshot();
    CHECK(after.locations[1].requests() == 1);  // the first one is gone for good
    CHECK(after.locations[1].request_duration.count == 1);
    CHECK(after.locations[2].requests() == 0);  // the idle worker's stays zeroed
    CHECK(after.connections_active == 2);
    idle.connection_closed();
    CHECK(counters->snapshot().connections_active == 1);
    CHECK(counters->snapshot().locations[2].requests() == 0);
}

TEST_CASE("TLS handshakes: counts by result per worker and in total, one histogram of the "
          "completed ones, zeroed by a reset", "[metrics]") {
    Config config = two_locations();
    auto counters = region_for(config);
    WorkerCounters a = counters->attach(counters->lease_slot(0).slot, config);
    WorkerCounters b = counters->attach(counters->lease_slot(1).slot, config);
    a.tls_handshake_finished(TlsHandshake::full, 2 * ms);
    a.tls_handshake_finished(TlsHandshake::full, 3 * ms);
    a.tls_handshake_finished(TlsHandshake::failed, 0);
    b.tls_handshake_finished(TlsHandshake::resumed, 1 * ms);
    b.tls_handshake_finished(TlsHandshake::failed, 0);
    b.tls_handshake_finished(TlsHandshake::failed, 0);

    auto index = [](TlsHandshake result) { return static_cast<size_t>(result); };
    Snapshot snapshot = counters->snapshot();
    CHECK(snapshot.tls_handshakes[index(TlsHandshake::full)] == 2);
    CHECK(snapshot.tls_handshakes[index(TlsHandshake::resumed)] == 1);
    CHECK(snapshot.tls_handshakes[index(TlsHandshake::failed)] == 3);
    // Failed handshakes have no time: the histogram holds full + resumed.
    CHECK(snapshot.tls_handshake_time.count == 3);
    CHECK(snapshot.tls_handshake_time.sum_ns == 6 * ms);
    CHECK(snapshot.tls_handshake_time.max_ns == 3 * ms);
    REQUIRE(snapshot.workers.size() == 2);
    CHECK(snapshot.workers[0].tls_handshakes == std::array<uint64_t, 3>{2, 0, 1});
    CHECK(snapshot.workers[1].tls_handshakes == std::array<uint64_t, 3>{0, 1, 2});

    counters->reset();
    Snapshot zeroed = counters->snapshot();  // nobody has recorded since
    CHECK(zeroed.tls_handshakes == std::array<uint64_t, 3>{0, 0, 0});
    CHECK(zeroed.tls_handshake_time.count == 0);
    CHECK(zeroed.workers[0].tls_handshakes == std::array<uint64_t, 3>{0, 0, 0});
    a.tls_handshake_finished(TlsHandshake::resumed, 1 * ms);  // a catches up: its slot zeroed
    Snapshot after = counters->snapshot();
    CHECK(after.tls_handshakes == std::array<uint64_t, 3>{0, 1, 0});
    CHECK(after.tls_handshake_time.count == 1);
    CHECK(after.tls_handshake_time.max_ns == 1 * ms);
}

TEST_CASE("leases share a slot only when every slot is held", "[metrics]") {
    Config config = two_locations();
    std::string error;
    auto counters = SharedCounters::create(
        {.slots = 2, .locations = 4, .servers = 4, .name_bytes = 256}, error);
    REQUIRE(counters);
    counters->register_names(config);
    CHECK_FALSE(counters->lease_slot(0).shared);
    CHECK_FALSE(counters->lease_slot(1).shared);
    SharedCounters::Lease third = counters->lease_slot(0);
    CHECK(third.shared);
    CHECK(third.slot == 0);
}

TEST_CASE("names that find no room are reported and counted nowhere", "[metrics]") {
    Config config = config_with({"a", "b", "c"}, {{"app", {"127.0.0.1:3000"}}});
    std::string error;
    auto counters = SharedCounters::create(
        {.slots = 1, .locations = 3, .servers = 1, .upstreams = 0, .name_bytes = 64}, error);
    REQUIRE(counters);
    std::vector<std::string> no_room = counters->register_names(config);
    // "-" takes the first location entry.
    REQUIRE(no_room.size() == 2);
    CHECK(no_room[0] == "location c");
    CHECK(no_room[1] == "upstream app");
    WorkerCounters worker = counters->attach(counters->lease_slot(0).slot, config);
    worker.request_finished(2, from_file(1));
    worker.request_finished(1, from_file(1));
    worker.upstream_queue_timed_out(0);
    Snapshot snapshot = counters->snapshot();
    REQUIRE(snapshot.locations.size() == 3);
    CHECK(snapshot.locations[0].requests() == 0);
    CHECK(snapshot.locations[1].requests() == 0);
    CHECK(snapshot.locations[2].requests() == 1);
    CHECK(snapshot.upstreams.empty());
}

TEST_CASE("a forked worker's counts reach the parent through the region", "[metrics]") {
    Config config = two_locations();
    auto counters = region_for(config);
    unsigned slot = counters->lease_slot(0).slot;
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        WorkerCounters worker = counters->attach(slot, config);
        for (int i = 0; i < 1000; ++i) worker.request_finished(0, proxied_request(200, 2 * ms, 1 * ms));
        _exit(0);
    }
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    counters->release_slot(slot);
    Snapshot snapshot = counters->snapshot();
    CHECK(snapshot.locations[1].requests() == 1000);
    CHECK(snapshot.locations[1].proxy_overhead.sum_ns == 1000 * ms);
    CHECK(snapshot.workers[0].pid == pid);
}

TEST_CASE("refusals: by limit of each location, kept by name across a reload, and access denials",
          "[metrics][access]") {
    Config before = config_with({"api", "admin"}, {});
    before.limits.resize(2);
    before.limits[0].name = "per_ip";
    before.limits[1].name = "per_user";
    before.locations[0].limits = {0, 1};
    before.locations[0].max_concurrent.emplace();
    before.locations[1].limits = {1};
    auto counters = region_for(before);
    WorkerCounters worker = counters->attach(counters->lease_slot(0).slot, before);
    worker.count_limited(0, 1);  // api, per_user
    worker.count_limited(0, 2);  // api, max_concurrent
    worker.count_limited(0, 2);
    worker.count_limited(1, 0);  // admin, per_user
    worker.count_access_denied(1, AccessDenial::address);
    worker.count_access_denied(1, AccessDenial::auth);
    worker.count_access_denied(1, AccessDenial::auth);

    // api lists its limits the other way round now, without max_concurrent.
    Config after = config_with({"api"}, {});
    after.limits = before.limits;
    after.locations[0].limits = {1, 0};
    CHECK(counters->register_names(after).empty());
    WorkerCounters reloaded = counters->attach(counters->lease_slot(0).slot, after);
    reloaded.count_limited(0, 0);  // api, per_user

    Snapshot snapshot = counters->snapshot();
    auto refused = [&](const std::string& location, const std::string& limit) -> int64_t {
        for (const LimitSnapshot& entry : snapshot.limits)
            if (entry.location == location && entry.limit == limit)
                return static_cast<int64_t>(entry.refused);
        return -1;
    };
    CHECK(snapshot.limits.size() == 4);
    CHECK(refused("api", "per_ip") == 0);
    CHECK(refused("api", "per_user") == 2);
    CHECK(refused("api", "max_concurrent") == 2);
    CHECK(refused("admin", "per_user") == 1);
    REQUIRE(snapshot.locations.size() == 3);
    CHECK(snapshot.locations[2].name == "admin");
    CHECK(snapshot.locations[2].access_denied == std::array<uint64_t, 2>{1, 2});
    CHECK(snapshot.locations[1].access_denied == std::array<uint64_t, 2>{0, 0});

    counters->reset();
    reloaded.count_access_denied(0, AccessDenial::address);
    snapshot = counters->snapshot();
    CHECK(refused("api", "per_user") == 0);
    CHECK(snapshot.locations[1].access_denied == std::array<uint64_t, 2>{1, 0});
}
