// The response filter of a location with `cache`: each response the
// upstream sends passes through to the client as it arrives, never held
// back, while a copy is kept in the worker; the copy goes into the shared
// store (cache/store.hpp) only when the body completed as its head said
// (a truncated or failed body is never stored), and only when RFC 9111
// allows it (cache/policy.hpp). It also answers stale_if_error: an upstream
// error (500, 502, 503, 504; the proxy's own for a refused or reset
// connection and a timeout) is replaced by the stale copy the handler found.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "cache/location_cache.hpp"
#include "cache/policy.hpp"
#include "http/response_filter.hpp"

namespace portico::cache {

class CacheStream final : public http::FilterStream {
public:
    explicit CacheStream(LocationCache& cache) : cache_(cache) {}

    // What the handler decided for this request, before its content runs.
    enum class Mode : uint8_t {
        idle,        // the handler did not run (a static file answered): untouched
        pass,        // the response goes to the client untouched (and is not stored)
        store,       // stored once complete, if RFC 9111 allows
        from_cache,  // the handler answers from the cache itself
    };
    Mode mode = Mode::idle;
    Result result = Result::miss;  // counted when the head passes
    std::string key;               // the expanded key
    KeyHash hash;
    bool holds_lock = false;                    // this request's fill lock, released at its end
    std::shared_ptr<const CachedObject> stale;  // for stale_if_error
    // A refresh of the cache's own (background_refresh.hpp): not counted,
    // and its errors are kept from the store, not answered stale.
    bool background = false;

    const http::Request* request() const { return request_; }
    // For a hit answered at once: the exchange `wrapped` (this stream's)
    // goes back to the filter, and the hit is answered on what it wrapped,
    // without the filter's copies of its head.
    http::Exchange& unwrap(http::Exchange& wrapped);

    bool start(const http::Request& request) override;
    void head(http::HeadersOut& head) override;
    void body(http::BodyPart& part) override;
    void end() override;
    void abort() override;

private:
    void release_lock();
    void stop_storing();
    void finish();
    bool answer_stale(int status);

    LocationCache& cache_;
    const http::Request* request_ = nullptr;
    bool taken_over_ = false;  // a stale answer replaced the response
    int status_ = 0;
    std::optional<uint64_t> length_;
    std::string head_;
    std::string body_;
    StoragePolicy policy_;
    KeyHash variant_;  // of a Vary response: its entry
};

class CacheFilter final : public http::ResponseFilter {
public:
    explicit CacheFilter(LocationCache& cache) : cache_(cache) {}

protected:
    std::unique_ptr<http::FilterStream> new_stream() override {
        return std::make_unique<CacheStream>(cache_);
    }

private:
    LocationCache& cache_;
};

}  // namespace portico::cache
