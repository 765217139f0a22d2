// The first content handler of a location with `cache`, before its proxy:
// answers a fresh hit from the shared store (over either protocol: it
// only sees the Exchange; in the client's coding when a compressed variant
// is stored, variant_stream.hpp), a stale one while a background request
// refreshes it (stale_while_revalidate, background_refresh.hpp: the
// request that finds it stale starts it), or lets the proxy answer a miss, which the
// location's CacheStream stores. With `lock`, a miss whose key another
// request (in any worker) is already fetching waits for it: a Waiting
// polls the store on the loop's timers, hears the client leave, and after
// lock_timeout goes upstream itself, uncached.
#pragma once

#include <memory>
#include <vector>

#include "cache/background_refresh.hpp"
#include "cache/cache_stream.hpp"
#include "cache/disk_tier.hpp"
#include "cache/location_cache.hpp"
#include "cache/variant_stream.hpp"
#include "core/lazy_timer.hpp"
#include "http/exchange.hpp"
#include "http/server_context.hpp"

namespace portico::cache {

class LockWait;

class CacheHandler final : public http::Handler, private DiskReadWaiter {
public:
    CacheHandler(LocationCache& cache, const http::LocationServing& serving,
                 core::IoPoller& poller);
    ~CacheHandler() override;
    bool serve(http::Exchange& exchange) override;

private:
    friend class LockWait;
    enum class Outcome : uint8_t { answered, upstream, wait };
    // The store's answer for the request: a hit, a stale copy, or the
    // upstream (the stream set to store); `wait` when the key is locked.
    // `direct`: not from inside the filter's exchange (a lock wait), so a
    // hit may be answered on the exchange it wraps.
    // `variants`: the request's VariantStream, when the location compresses.
    Outcome consult(http::Exchange& exchange, CacheStream& stream, bool direct,
                    VariantStream* variants = nullptr);
    // The location's handlers after this one (the proxy), for a request
    // that waited.
    void serve_rest(http::Exchange& exchange);
    LockWait& acquire();
    // A miss read back from disk waits as for a lock: woken when a read ended.
    void disk_read_ended() override;

    LocationCache& cache_;
    const http::LocationServing& serving_;
    core::IoPoller& poller_;
    std::vector<std::unique_ptr<LockWait>> waits_;
    std::vector<LockWait*> free_;
    BackgroundRefreshes refreshes_;
};

}  // namespace portico::cache
