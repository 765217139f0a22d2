// What a unit test builds a worker's pieces on (an Upstream, a filter, a
// ProxyExchange): the shared counters with one worker's slot for `config`,
// and a libuv loop with the worker's IoPoller. A subject made from them is
// closed first, then finish() runs the loop until what closes has closed.
#pragma once

#include <uv.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "config/config.hpp"
#include "core/io_poller.hpp"
#include "metrics/shared_counters.hpp"
#include "metrics/worker_counters.hpp"

namespace portico::test {

class TestWorker {
public:
    explicit TestWorker(const config::Config& config) {
        std::string error;
        shared_ = metrics::SharedCounters::create(metrics::capacity_for(config), error);
        REQUIRE(shared_);
        shared_->register_names(config);
        counters_ = std::make_unique<metrics::WorkerCounters>(shared_->attach(shared_->lease_slot(0).slot, config));
        uv_loop_init(&loop_);
        poller_ = std::make_unique<core::IoPoller>(&loop_);
    }
    ~TestWorker() {
        finish();
        poller_.reset();
        uv_loop_close(&loop_);
    }
    TestWorker(const TestWorker&) = delete;
    TestWorker& operator=(const TestWorker&) = delete;

    metrics::WorkerCounters& counters() { return *counters_; }
    // What the counters hold now, every slot added up.
    metrics::Snapshot snapshot() const { return shared_->snapshot(); }
    core::IoPoller& poller() { return *poller_; }
    uv_loop_t* loop() { return &loop_; }

    // What this turn released is freed, and libuv's handles closed.
    void finish() {
        poller_->turn(0);
        uv_run(&loop_, UV_RUN_DEFAULT);
    }
    // The loop's clock moves on by `by` (a loop that is not run keeps its time).
    void advance(std::chrono::milliseconds by) {
        std::this_thread::sleep_for(by);
        uv_update_time(&loop_);
    }

private:
    std::unique_ptr<metrics::SharedCounters> shared_;
    std::unique_ptr<metrics::WorkerCounters> counters_;
    uv_loop_t loop_;
    std::unique_ptr<core::IoPoller> poller_;
};

}  // namespace portico::test
