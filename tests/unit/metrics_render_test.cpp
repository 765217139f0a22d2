#include <catch2/catch.hpp>
#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "metrics/render.hpp"
#include "durations.hpp"

using namespace portico::metrics;

namespace {

HistogramSnapshot histogram_of(std::initializer_list<uint64_t> values) {
    HistogramSlot slot;
    for (uint64_t value : values) slot.record(value);
    HistogramSnapshot snapshot;
    snapshot.add(slot);
    return snapshot;
}

Snapshot sample_snapshot() {
    Snapshot snapshot;
    snapshot.connections_accepted = 7;
    snapshot.connections_active = 2;
    snapshot.config_reloads_ok = 1;
    LocationSnapshot location;
    location.name = "say \"hi\"\\\nnow";
    location.responses[status_slot(200)] = 3;
    location.responses[status_slot(299)] = 1;  // unregistered: counted as 2xx
    location.access_denied[static_cast<size_t>(AccessDenial::auth)] = 9;
    location.request_duration = histogram_of({40'000, 60'000, 2 * ms, 20'000 * ms});
    location.upstream_duration = histogram_of({1 * ms});
    location.proxy_overhead = histogram_of({100'000});
    snapshot.locations.push_back(location);
    ServerSnapshot server;
    server.upstream = "app";
    server.server = "127.0.0.1:3000";
    server.requests = 4;
    server.errors[static_cast<size_t>(UpstreamError::timeout)] = 1;
    server.connect_time = histogram_of({200'000});
    snapshot.servers.push_back(server);
    snapshot.upstreams.push_back({.name = "app", .queued = 2, .queue_timeouts = 5});
    snapshot.limits.push_back({.location = "api", .limit = "per_ip", .refused = 6});
    snapshot.limits.push_back({.location = "api", .limit = "max_concurrent", .refused = 0});
    snapshot.tls_handshakes = {3, 1, 2};  // full, resumed, failed
    snapshot.tls_handshake_time = histogram_of({2 * ms, 3 * ms, 4 * ms, 1 * ms});
    snapshot.workers.push_back({.slot = 0,
                                .worker = 0,
                                .pid = 42,
                                .live = true,
                                .connections_accepted = 7,
                                .connections_active = 2,
                                .requests = 4,
                                .tls_handshakes = {3, 1, 2}});
    return snapshot;
}

std::vector<std::string> lines_starting(const std::string& text, const std::string& prefix) {
    std::vector<std::string> found;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        if (line.rfind(prefix, 0) == 0) found.push_back(line);
    return found;
}

uint64_t value_of(const std::string& line) {
    return std::stoull(line.substr(line.rfind(' ') + 1));
}

}  // namespace

TEST_CASE("seconds are printed exactly from nanoseconds", "[metrics]") {
    CHECK(format_seconds(0) == "0");
    CHECK(format_seconds(50'000) == "0.00005");
    CHECK(format_seconds(1'500'000) == "0.0015");
    CHECK(format_seconds(10'000'000'000) == "10");
    CHECK(format_seconds(1'234'567'891) == "1.234567891");
}

TEST_CASE("label values escape backslash, double quote and newline", "[metrics]") {
    CHECK(escape_label_value("plain /path") == "plain /path");
    CHECK(escape_label_value("a\\b\"c\nd") == "a\\\\b\\\"c\\nd");

    std::string text = render_prometheus(sample_snapshot());
    CHECK(text.find(
              "portico_requests_total{location=\"say \\\"hi\\\"\\\\\\nnow\",code=\"200\"} 3\n") !=
          std::string::npos);
    // The raw newline never reaches the output: every line is a comment or a sample.
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        CHECK((line.rfind("portico_", 0) == 0 || line.rfind("# ", 0) == 0));
}

TEST_CASE("request codes: exact when registered, else by class, zeros left out", "[metrics]") {
    std::string text = render_prometheus(sample_snapshot());
    std::vector<std::string> requests = lines_starting(text, "portico_requests_total{");
    REQUIRE(requests.size() == 2);
    CHECK(requests[1].find("code=\"2xx\"} 1") != std::string::npos);
}

TEST_CASE("histogram buckets are cumulative and end with +Inf = count", "[metrics]") {
    std::string text = render_prometheus(sample_snapshot());
    std::vector<std::string> buckets =
        lines_starting(text, "portico_request_duration_seconds_bucket{");
    REQUIRE(buckets.size() == bucket_count);
    CHECK(buckets.front().find(",le=\"0.00005\"} 1") != std::string::npos);
    CHECK(buckets[1].find(",le=\"0.000075\"} 2") != std::string::npos);
    uint64_t previous = 0;
    for (const std::string& line : buckets) {
        CHECK(value_of(line) >= previous);
        previous = value_of(line);
    }
    CHECK(buckets.back().find(",le=\"+Inf\"} 4") != std::string::npos);
    CHECK(buckets[bucket_count - 2].find(",le=\"10\"} 3") != std::string::npos);
    std::vector<std::string> count = lines_starting(text, "portico_request_duration_seconds_count");
    REQUIRE(count.size() == 1);
    CHECK(value_of(count[0]) == 4);
    CHECK(!lines_starting(text, "portico_request_duration_seconds_sum{location=").empty());
}

TEST_CASE("every series the spec names has HELP and TYPE", "[metrics]") {
    std::string text = render_prometheus(sample_snapshot());
    const char* families[][2] = {
        {"portico_connections_accepted_total", "counter"},
        {"portico_connections_active", "gauge"},
        {"portico_requests_total", "counter"},
        {"portico_request_duration_seconds", "histogram"},
        {"portico_upstream_duration_seconds", "histogram"},
        {"portico_proxy_overhead_seconds", "histogram"},
        {"portico_response_bytes_total", "counter"},
        {"portico_sendfile_bytes_total", "counter"},
        {"portico_upstream_connections_opened_total", "counter"},
        {"portico_upstream_connections_reused_total", "counter"},
        {"portico_upstream_connections_idle", "gauge"},
        {"portico_upstream_errors_total", "counter"},
        {"portico_upstream_retries_total", "counter"},
        {"portico_worker_restarts_total", "counter"},
        {"portico_config_reloads_total", "counter"},
        {"portico_upstream_connect_seconds", "histogram"},
        {"portico_upstream_queued", "gauge"},
        {"portico_upstream_queue_timeouts_total", "counter"},
        {"portico_tls_handshakes_total", "counter"},
        {"portico_tls_handshake_seconds", "histogram"},
        {"portico_proxy_protocol_errors_total", "counter"},
        {"portico_limited_total", "counter"},
        {"portico_access_denied_total", "counter"},
    };
    for (const auto& [name, type] : families) {
        INFO(name);
        CHECK(text.find(std::string("# HELP ") + name + " ") != std::string::npos);
        CHECK(text.find(std::string("# TYPE ") + name + " " + type + "\n") != std::string::npos);
    }
    CHECK(text.find("portico_upstream_errors_total{upstream=\"app\",server=\"127.0.0.1:3000\","
                    "kind=\"timeout\"} 1\n") != std::string::npos);
    CHECK(text.find("portico_upstream_queued{upstream=\"app\"} 2\n") != std::string::npos);
    CHECK(text.find("portico_upstream_queue_timeouts_total{upstream=\"app\"} 5\n") !=
          std::string::npos);
    CHECK(text.find("portico_config_reloads_total{result=\"ok\"} 1\n") != std::string::npos);
    CHECK(text.find("portico_config_reloads_total{result=\"failed\"} 0\n") != std::string::npos);
    // Every limit, zero or not; access denials where there are some.
    CHECK(text.find("portico_limited_total{location=\"api\",limit=\"per_ip\"} 6\n") !=
          std::string::npos);
    CHECK(text.find("portico_limited_total{location=\"api\",limit=\"max_concurrent\"} 0\n") !=
          std::string::npos);
    CHECK(text.find("portico_access_denied_total{location=\"say \\\"hi\\\"\\\\\\nnow\",reason="
                    "\"auth\"} 9\n") != std::string::npos);
    CHECK(text.find("reason=\"address\"") == std::string::npos);
}

TEST_CASE("JSON carries totals, workers, locations, servers and percentiles", "[metrics]") {
    std::string json = render_json(sample_snapshot());
    CHECK(json.front() == '{');
    CHECK(json.back() == '}');
    CHECK(json.find("\"name\":\"say \\\"hi\\\"\\\\\\u000anow\"") != std::string::npos);
    CHECK(json.find("\"responses\":{\"1xx\":0,\"2xx\":4,\"3xx\":0,\"4xx\":0,\"5xx\":0,"
                    "\"other\":0}") != std::string::npos);
    CHECK(json.find("\"codes\":{\"200\":3,\"2xx\":1}") != std::string::npos);
    CHECK(json.find("\"access_denied\":{\"address\":0,\"auth\":9}") != std::string::npos);
    CHECK(json.find("\"limits\":[{\"location\":\"api\",\"limit\":\"per_ip\",\"refused\":6},") !=
          std::string::npos);
    // One 1 ms value in (750 us, 1 ms]: percentiles interpolate inside the bucket.
    CHECK(json.find("\"upstream_duration\":{\"count\":1,\"sum\":0.001,\"p50\":0.000875,"
                    "\"p90\":0.000975,\"p99\":0.0009975,\"max\":0.001,") != std::string::npos);
    CHECK(json.find("\"workers\":[{\"slot\":0,\"worker\":0,\"pid\":42,\"live\":true,") !=
          std::string::npos);
    CHECK(
        json.find(
            "\"errors\":{\"connect\":0,\"timeout\":1,\"reset\":0,\"bad_response\":0,\"tls\":0}") !=
        std::string::npos);
    CHECK(json.find("\"config_reloads\":{\"ok\":1,\"failed\":0}") != std::string::npos);
    CHECK(json.find("\"upstreams\":[{\"name\":\"app\",\"queued\":2,\"queue_timeouts\":5}]") !=
          std::string::npos);
}

TEST_CASE("JSON histograms carry their buckets, the bounds once at the top", "[metrics]") {
    std::string json = render_json(sample_snapshot());
    CHECK(json.rfind("{\"bucket_bounds\":[0.00005,0.000075,0.0001,", 0) == 0);
    CHECK(json.find(",7.5,10],") != std::string::npos);
    // 1 ms is the bound of the ninth bucket; per bucket, not cumulative.
    std::string upstream = "\"upstream_duration\":{";
    size_t at = json.find("\"buckets\":[", json.find(upstream));
    REQUIRE(at != std::string::npos);
    std::string expected = "\"buckets\":[0,0,0,0,0,0,0,0,1,0";
    CHECK(json.compare(at, expected.size(), expected) == 0);
    // bucket_count entries: one per bound and the one above them.
    size_t end = json.find(']', at);
    std::string list = json.substr(at, end - at);
    CHECK(static_cast<size_t>(std::count(list.begin(), list.end(), ',')) == bucket_count - 1);
}

TEST_CASE("TLS handshakes: a counter by result and a histogram without labels", "[metrics]") {
    std::string text = render_prometheus(sample_snapshot());
    CHECK(text.find("portico_tls_handshakes_total{result=\"full\"} 3\n") != std::string::npos);
    CHECK(text.find("portico_tls_handshakes_total{result=\"resumed\"} 1\n") != std::string::npos);
    CHECK(text.find("portico_tls_handshakes_total{result=\"failed\"} 2\n") != std::string::npos);
    std::vector<std::string> buckets =
        lines_starting(text, "portico_tls_handshake_seconds_bucket{");
    REQUIRE(buckets.size() == bucket_count);
    CHECK(buckets.front() == "portico_tls_handshake_seconds_bucket{le=\"0.00005\"} 0");
    CHECK(buckets.back() == "portico_tls_handshake_seconds_bucket{le=\"+Inf\"} 4");
    CHECK(text.find("\nportico_tls_handshake_seconds_sum 0.01\n") != std::string::npos);
    CHECK(text.find("\nportico_tls_handshake_seconds_count 4\n") != std::string::npos);

    // Without [tls] the series are still there, at zero.
    std::string none = render_prometheus(Snapshot{});
    CHECK(none.find("portico_tls_handshakes_total{result=\"failed\"} 0\n") != std::string::npos);
    CHECK(none.find("\nportico_tls_handshake_seconds_count 0\n") != std::string::npos);

    std::string json = render_json(sample_snapshot());
    CHECK(json.find("\"upstream_retries\":0,\"tls_handshakes\":{\"full\":3,\"resumed\":1,"
                    "\"failed\":2},\"compression\":") != std::string::npos);
    CHECK(json.find("\"tls_handshake_time\":{\"count\":4,\"sum\":0.01,") != std::string::npos);
    // Per worker slot too.
    CHECK(json.find("\"requests\":4,\"upstream_retries\":0,\"tls_handshakes\":{\"full\":3,"
                    "\"resumed\":1,\"failed\":2}}") != std::string::npos);
}

TEST_CASE("compression: responses, cache hits and bytes by coding, zero when unused", "[metrics]") {
    Snapshot snapshot;
    snapshot.compression[static_cast<size_t>(portico::config::Coding::br)] = {5, 2, 10000, 1200};
    snapshot.compression[static_cast<size_t>(portico::config::Coding::gzip)] = {1, 0, 300, 90};
    std::string text = render_prometheus(snapshot);
    CHECK(text.find("# TYPE portico_compressed_responses_total counter\n") != std::string::npos);
    CHECK(text.find("portico_compressed_responses_total{coding=\"br\"} 5\n") != std::string::npos);
    CHECK(text.find("portico_compressed_responses_total{coding=\"zstd\"} 0\n") != std::string::npos);
    CHECK(text.find("portico_compressed_cache_hits_total{coding=\"br\"} 2\n") != std::string::npos);
    CHECK(text.find("portico_compression_in_bytes_total{coding=\"br\"} 10000\n") != std::string::npos);
    CHECK(text.find("portico_compression_out_bytes_total{coding=\"br\"} 1200\n") != std::string::npos);
    CHECK(text.find("portico_compression_out_bytes_total{coding=\"gzip\"} 90\n") != std::string::npos);

    std::string json = render_json(snapshot);
    CHECK(json.find("\"compression\":{\"br\":{\"responses\":5,\"cache_hits\":2,\"bytes_in\":10000,"
                    "\"bytes_out\":1200},\"zstd\":{\"responses\":0,\"cache_hits\":0,\"bytes_in\":0,"
                    "\"bytes_out\":0},\"gzip\":{\"responses\":1,") != std::string::npos);
}
