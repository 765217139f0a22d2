#include "cache/cache_handler.hpp"

#include <algorithm>

#include "http/request_routing.hpp"
#include "http/template_expand.hpp"

namespace portico::cache {

namespace {
// How often a waiting request looks at the store again: the request it
// waits for may be in another worker, which cannot wake this one.
constexpr uint64_t poll_interval_ms = 5;
}  // namespace

// A request waiting for another's fetch of its key.
class LockWait final : private http::ExchangeListener {
public:
    void begin(CacheHandler& handler, http::Exchange& exchange, CacheStream& stream) {
        handler_ = &handler;
        exchange_ = &exchange;
        stream_ = &stream;
        deadline_ms_ =
            monotonic_ms() + static_cast<uint64_t>(handler.cache_.config.lock_timeout.count());
        // A body waits unread; without one the client is still read, so
        // its leaving is heard (a held connection is not read at all).
        if (exchange.request().has_body()) exchange.hold_request_body();
        exchange.set_listener(this);
        timer_.arm(poll_interval_ms);
    }
    static void on_timer(void* self) { static_cast<LockWait*>(self)->look_again(); }
    void wake() {
        if (handler_ != nullptr) timer_.arm(0);
    }
    core::LazyTimer timer_;

private:
    void look_again() {
        CacheHandler& handler = *handler_;
        http::Exchange& exchange = *exchange_;
        CacheStream& stream = *stream_;
        exchange.set_listener(nullptr);
        CacheHandler::Outcome outcome = handler.consult(exchange, stream, false);
        if (outcome == CacheHandler::Outcome::wait) {
            if (monotonic_ms() < deadline_ms_) {
                exchange.set_listener(this);
                timer_.arm(poll_interval_ms);
                return;
            }
            // nginx's proxy_cache_lock_timeout: upstream, not stored.
            stream.mode = CacheStream::Mode::pass;
            outcome = CacheHandler::Outcome::upstream;
        }
        done();
        if (outcome == CacheHandler::Outcome::upstream) handler.serve_rest(exchange);
    }
    bool on_request_body(std::string_view) override { return false; }
    void on_request_complete() override {}
    void on_output_drained() override {}
    void on_client_gone() override { done(); }
    void done() {
        timer_.disarm();
        CacheHandler* handler = std::exchange(handler_, nullptr);
        handler->free_.push_back(this);
    }

    CacheHandler* handler_ = nullptr;
    http::Exchange* exchange_ = nullptr;
    CacheStream* stream_ = nullptr;
    uint64_t deadline_ms_ = 0;
};

CacheHandler::CacheHandler(LocationCache& cache, const http::LocationServing& serving,
                           core::IoPoller& poller)
    : cache_(cache), serving_(serving), poller_(poller) {
    if (cache_.disk != nullptr) cache_.disk->add_waiter(*this);
}

CacheHandler::~CacheHandler() {
    if (cache_.disk != nullptr) cache_.disk->remove_waiter(*this);
    for (std::unique_ptr<LockWait>& wait : waits_) wait->timer_.cancel();
}

void CacheHandler::disk_read_ended() {
    for (std::unique_ptr<LockWait>& wait : waits_) wait->wake();
}

LockWait& CacheHandler::acquire() {
    if (free_.empty()) {
        waits_.push_back(std::make_unique<LockWait>());
        waits_.back()->timer_.init(poller_, waits_.back().get(), LockWait::on_timer);
        free_.push_back(waits_.back().get());
    }
    LockWait* wait = free_.back();
    free_.pop_back();
    return *wait;
}

bool CacheHandler::serve(http::Exchange& exchange) {
    CacheStream* stream = std::exchange(cache_.started, nullptr);
    VariantStream* variants = std::exchange(cache_.variant_started, nullptr);
    const http::Request& request = exchange.request();
    if (variants != nullptr && variants->request() != &request) variants = nullptr;
    // Another request's stream, when this one waited at the admission
    // checks while others were routed: it goes by uncached.
    if (stream != nullptr && stream->request() != &request) stream = nullptr;
    if (stream == nullptr) {
        cache_.record(request, Result::bypass);
        return false;
    }
    stream->key.clear();
    http::expand(cache_.config.key, request, exchange.client_address(), {}, stream->key);
    stream->hash = hash_key(stream->key);
    switch (consult(exchange, *stream, true, variants)) {
    case Outcome::answered:
        return true;
    case Outcome::upstream:
        return false;
    case Outcome::wait:
        acquire().begin(*this, exchange, *stream);
        return true;
    }
    return false;
}

CacheHandler::Outcome CacheHandler::consult(http::Exchange& exchange, CacheStream& stream,
                                            bool direct, VariantStream* variants) {
    const http::Request& request = exchange.request();
    KeyHash stored_under;
    std::shared_ptr<const CachedObject> object =
        cache_.lookup(stream.hash, stream.key, request, &stored_under);
    // On disk: the request waits (as for a lock) while it is read back into memory.
    if (!object && cache_.disk != nullptr && cache_.disk->fetch(stored_under)) return Outcome::wait;
    int64_t age = 0;
    bool updating_allowed = false;
    if (object) {
        age = age_of(*object, unix_seconds());
        if (is_fresh(*object, age)) {
            stream.mode = CacheStream::Mode::from_cache;
            if (variants != nullptr) {
                if (std::shared_ptr<const CachedObject> coded =
                        variants->coded_variant(object, stored_under)) {
                    answer_from_object(variants->past_compression(stream.unwrap(exchange)),
                                       std::move(coded), age, cache_, Result::hit);
                    return Outcome::answered;
                }
            }
            answer_from_object(direct ? stream.unwrap(exchange) : exchange, std::move(object), age,
                               cache_, Result::hit);
            return Outcome::answered;
        }
        updating_allowed = !object->facts().revalidate_always &&
                           age < object->facts().lifetime + object->facts().stale_while_revalidate;
        stream.stale = std::move(object);
        stream.result = Result::expired;
    } else {
        stream.result = Result::miss;
    }
    // The fill lock: for `lock`, and for the one request that refreshes a
    // copy others answer stale meanwhile (stale_while_revalidate).
    if (cache_.config.lock || updating_allowed) {
        bool taken = false;
        {
            core::SharedLock lock(cache_.store.mutex());
            taken =
                cache_.store.try_lock(stream.hash, monotonic_ms(),
                                      static_cast<uint64_t>(cache_.config.lock_timeout.count()));
        }
        if (!taken && updating_allowed) {
            stream.mode = CacheStream::Mode::from_cache;
            std::shared_ptr<const CachedObject> stale = std::move(stream.stale);
            answer_from_object(direct ? stream.unwrap(exchange) : exchange, std::move(stale), age,
                               cache_, Result::updating);
            return Outcome::answered;
        }
        if (!taken) return Outcome::wait;
        stream.holds_lock = true;
        if (updating_allowed) {
            // nginx's proxy_cache_background_update: this request too gets
            // the stale copy at once (STALE, as nginx says), while a
            // request of the cache's own, holding the lock, refreshes it.
            serve_rest(refreshes_.acquire().begin(refreshes_, cache_, exchange, stream));
            stream.mode = CacheStream::Mode::from_cache;
            std::shared_ptr<const CachedObject> stale = std::move(stream.stale);
            answer_from_object(direct ? stream.unwrap(exchange) : exchange, std::move(stale), age,
                               cache_, Result::stale);
            return Outcome::answered;
        }
    }
    stream.mode = CacheStream::Mode::store;
    // The whole object is fetched to be stored, for a HEAD or a Range too
    // (the client gets its head, or the whole: RFC 9110 14.2 lets a server
    // ignore Range); a conditional miss gets the object, not a 304.
    request.upstream_whole_object = true;
    return Outcome::upstream;
}

void CacheHandler::serve_rest(http::Exchange& exchange) {
    auto self = std::find(serving_.handlers.begin(), serving_.handlers.end(), this);
    if (!serving_.streams_body && exchange.request().has_body()) exchange.resume_request_body();
    http::serve_handlers({self + 1, serving_.handlers.end()}, exchange);
}

}  // namespace portico::cache
