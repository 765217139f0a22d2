// What recording costs a worker per request, and what a scrape costs the
// reader. Build: ninja metrics_bench; run: ./build/tests/metrics_bench
#include <benchmark/benchmark.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>

#include "config/config.hpp"
#include "metrics/render.hpp"
#include "metrics/shared_counters.hpp"

using namespace portico::metrics;

namespace {

// The shape the report quotes: 20 locations, one upstream of 4 servers.
portico::config::Config bench_config() {
    portico::config::Config config;
    config.server.workers = 2;
    for (int i = 0; i < 20; ++i) {
        portico::config::LocationConfig location;
        location.name = "/location" + std::to_string(i);
        config.locations.push_back(location);
    }
    portico::config::UpstreamConfig upstream;
    upstream.name = "app";
    for (int i = 0; i < 4; ++i) {
        portico::config::SocketAddress server;
        server.text = "127.0.0.1:" + std::to_string(3000 + i);
        upstream.servers.push_back(server);
    }
    config.upstreams.push_back(upstream);
    return config;
}

struct Fixture {
    portico::config::Config config = bench_config();
    std::unique_ptr<SharedCounters> counters;
    // Log-uniform durations from 20 us to 2 s, so bucket search and branches
    // see realistic variety rather than one value the predictor learns.
    std::array<RequestRecord, 1024> requests;

    Fixture() {
        std::string error;
        counters = SharedCounters::create(capacity_for(config), error);
        counters->register_names(config);
        std::mt19937_64 random(42);
        std::uniform_real_distribution<double> exponent(4.3, 9.3);
        for (RequestRecord& request : requests) {
            uint64_t upstream = static_cast<uint64_t>(std::pow(10.0, exponent(random)));
            uint64_t overhead = static_cast<uint64_t>(std::pow(10.0, exponent(random) - 4.0));
            request = {.status = random() % 10 == 0 ? 404 : 200,
                       .response_bytes = 2048,
                       .duration_ns = upstream + overhead,
                       .proxied = true,
                       .upstream_ns = upstream};
        }
    }
};

void BM_RecordProxiedRequest(benchmark::State& state) {
    Fixture fixture;
    WorkerCounters worker =
        fixture.counters->attach(fixture.counters->lease_slot(0).slot, fixture.config);
    size_t i = 0;
    for (auto _ : state) {
        const RequestRecord& request = fixture.requests[i % fixture.requests.size()];
        // Status, bytes and three histograms, plus the upstream server's request count.
        worker.upstream_request_sent(0, i % 4, true);
        worker.request_finished(i % 20, request);
        ++i;
    }
    benchmark::ClobberMemory();
}
BENCHMARK(BM_RecordProxiedRequest);

void BM_RecordStaticRequest(benchmark::State& state) {
    Fixture fixture;
    WorkerCounters worker =
        fixture.counters->attach(fixture.counters->lease_slot(0).slot, fixture.config);
    size_t i = 0;
    for (auto _ : state) {
        RequestRecord request = fixture.requests[i % fixture.requests.size()];
        request.proxied = false;
        request.sendfile_bytes = 1024;
        worker.request_finished(i % 20, request);
        ++i;
    }
    benchmark::ClobberMemory();
}
BENCHMARK(BM_RecordStaticRequest);

// The reader: sum two worker slots and render, as GET /metrics does.
void BM_ScrapePrometheus(benchmark::State& state) {
    Fixture fixture;
    for (unsigned worker_index = 0; worker_index < 2; ++worker_index) {
        WorkerCounters worker = fixture.counters->attach(
            fixture.counters->lease_slot(worker_index).slot, fixture.config);
        for (size_t i = 0; i < 10'000; ++i)
            worker.request_finished(i % 20, fixture.requests[i % fixture.requests.size()]);
    }
    for (auto _ : state) {
        std::string text = render_prometheus(fixture.counters->snapshot());
        benchmark::DoNotOptimize(text.data());
    }
}
BENCHMARK(BM_ScrapePrometheus);

}  // namespace

BENCHMARK_MAIN();
