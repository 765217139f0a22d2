// stale_while_revalidate's refresh in the background (nginx's
// proxy_cache_background_update): the request that finds its object stale
// gets the stale copy at once, and the cache fetches the fresh one with a
// request of its own, a copy of the client's made into a GET for the
// whole object. That request is tied to no client connection: its
// Exchange is a sink (BackgroundRefresh) that drops what it is sent, so a
// client that leaves takes nothing with it. It goes through the
// location's filters like any other, so the CacheStream stores the fresh
// object as it does a miss, and the same fill lock that admits one refresh
// per key is held by it until then.
//
// A refresh that fails (an error status, a refused or reset connection, a
// timeout: the stream then stores nothing, and the stale copy stays while
// stale_while_revalidate and stale_if_error allow) is logged, at most once
// a second per location and worker.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cache/cache_stream.hpp"
#include "cache/location_cache.hpp"
#include "http/exchange.hpp"

namespace portico::cache {

class BackgroundRefreshes;

class BackgroundRefresh final : public http::Exchange {
public:
    // Copies `client`'s request (whose stream, `stale_stream`, found the
    // stale copy and holds the fill lock, handed over to the refresh) and
    // wraps it in the cache's filter: the exchange for the location's
    // handlers after the cache.
    http::Exchange& begin(BackgroundRefreshes& owner, LocationCache& cache, http::Exchange& client,
                          CacheStream& stale_stream);

    // http::Exchange: the sink.
    const http::Request& request() const override { return request_; }
    const config::LocationConfig& location() const override { return *location_; }
    const http::PeerAddress& client_address() const override { return client_; }
    void set_client_address(const http::PeerAddress& address) override { client_ = address; }
    void begin_response(int status, uint64_t) override { status_ = status; }
    void begin_streamed_response(int status) override { status_ = status; }
    void add_header(std::string_view, std::string_view) override {}
    void send_body(std::string_view) override {}
    void send_body_pieces(std::span<const std::string_view>, bool last) override {
        if (last) finish();
    }
    void send_owned_body(std::string_view, std::shared_ptr<const void>) override {}
    void send_file(int, off_t, uint64_t, std::shared_ptr<const void>) override {}
    // Nothing is written: the block is free at once.
    void hand_over_buffer(core::BufferPool& pool, char* block) override { pool.release(block); }
    void end_response() override { finish(); }
    void abort() override {
        aborted_ = true;
        finish();
    }
    void set_listener(http::ExchangeListener*) override {}
    void resume_request_body() override {}
    void hold_request_body() override {}
    bool output_pending() const override { return false; }
    void switch_protocols() override {}
    void set_upstream_timing(uint64_t, uint64_t, std::string_view) override {}

private:
    void copy_request(const http::Request& client);
    void finish();

    BackgroundRefreshes* owner_ = nullptr;
    http::Request request_;
    std::string text_;  // what request_'s views point into
    const config::LocationConfig* location_ = nullptr;
    http::PeerAddress client_{};
    std::string key_;  // for the log
    int status_ = 0;
    bool aborted_ = false;
    bool running_ = false;
};

// A location's refreshes, reused once done (never freed under a call: a
// refresh ends inside its proxy's calls).
class BackgroundRefreshes {
public:
    BackgroundRefresh& acquire();
    void release(BackgroundRefresh& refresh) { free_.push_back(&refresh); }
    // Whether a failure may be logged now (once a second at most).
    bool may_log_failure();

private:
    std::vector<std::unique_ptr<BackgroundRefresh>> all_;
    std::vector<BackgroundRefresh*> free_;
    uint64_t logged_ms_ = 0;
};

}  // namespace portico::cache
