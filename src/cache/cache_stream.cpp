#include "cache/cache_stream.hpp"

#include <array>

#include "cache/disk_tier.hpp"
#include "cache/variant_stream.hpp"
#include "http/header_text.hpp"

namespace portico::cache {

namespace {

// A body buffer kept for the next response up to this capacity.
constexpr size_t kept_body_capacity = 1 << 20;

// Every value of a field, joined by ", " (RFC 9110 5.3).
std::string joined(const http::HeaderList& fields, std::string_view name) {
    std::string value;
    for (size_t i = 0; i < fields.size(); ++i) {
        if (!http::equals_ignore_case(fields.name(i), name)) continue;
        if (!value.empty()) value += ", ";
        value += fields.value(i);
    }
    return value;
}

bool has_field(const http::HeaderList& fields, std::string_view name) {
    for (size_t i = 0; i < fields.size(); ++i)
        if (http::equals_ignore_case(fields.name(i), name)) return true;
    return false;
}

bool is_upstream_error(int status) {
    return status == 500 || status == 502 || status == 503 || status == 504;
}

}  // namespace

bool CacheStream::start(const http::Request& request) {
    request_ = &request;
    mode = Mode::idle;
    result = Result::miss;
    holds_lock = taken_over_ = background = false;
    stale.reset();
    status_ = 0;
    length_.reset();
    head_.clear();
    body_.clear();
    // GET and HEAD only (RFC 9111 2): the others pass the filter by, and
    // the handler counts them as bypass.
    bool cacheable = request.method_name == "GET" || request.method_name == "HEAD";
    cache_.started = cacheable ? this : nullptr;
    return cacheable;
}

http::Exchange& CacheStream::unwrap(http::Exchange& wrapped) {
    http::Exchange& client = next().take_over();
    cache_.filter->unwrap(wrapped, client);
    return client;
}

void CacheStream::release_lock() {
    if (std::exchange(holds_lock, false)) {
        core::SharedLock lock(cache_.store.mutex());
        cache_.store.unlock(hash);
    }
}

void CacheStream::stop_storing() {
    release_lock();
    mode = Mode::pass;
    head_.clear();
    body_.clear();
    if (body_.capacity() > kept_body_capacity) std::string().swap(body_);
}

bool CacheStream::answer_stale(int status) {
    if (!is_upstream_error(status)) return false;
    int64_t age = age_of(*stale, unix_seconds());
    if (age >= stale->facts().lifetime + stale->facts().stale_if_error) return false;
    stop_storing();
    if (background) return false;
    taken_over_ = true;
    http::Exchange& client = next().take_over();
    answer_from_object(client, std::move(stale), age, cache_, Result::stale);
    return true;
}

void CacheStream::head(http::HeadersOut& head) {
    if (mode == Mode::from_cache || mode == Mode::idle) {
        next().head(head);
        return;
    }
    status_ = head.status;
    if (stale && answer_stale(head.status)) return;
    if (!background) cache_.record(*request_, result);
    if (mode == Mode::store) {
        std::string cache_control = joined(head.fields, "cache-control");
        std::string expires = joined(head.fields, "expires");
        std::string date = joined(head.fields, "date");
        std::string age = joined(head.fields, "age");
        std::string vary = joined(head.fields, "vary");
        // What the upstream was asked (a HEAD miss is fetched as a GET).
        std::string_view method =
            request_->upstream_whole_object ? std::string_view("GET") : request_->method_name;
        RequestFacts request{method, !request_->header("authorization").empty(),
                             request_->header("cache-control")};
        ResponseFacts response{head.status,
                               cache_control,
                               expires,
                               date,
                               age,
                               vary,
                               has_field(head.fields, "set-cookie")};
        policy_ = decide_storage(request, response, cache_.config.valid,
                                 std::chrono::system_clock::now());
        // An enormous Vary is refused by the policy (max_vary_names).
        if (!policy_.storable || head.status == 206 ||
            (head.length && *head.length > cache_.store.max_object_bytes())) {
            stop_storing();
        } else {
            length_ = head.length;
            head_ = serialize_head(head.fields);
            if (!policy_.vary.empty()) {
                std::vector<std::string_view> names(policy_.vary.begin(), policy_.vary.end());
                variant_ = variant_key(key, names, *request_);
            }
        }
    }
    if (!cache_.config.status_header.empty())
        head.fields.add_lasting(cache_.config.status_header, result_text(result));
    next().head(head);
}

void CacheStream::body(http::BodyPart& part) {
    if (taken_over_) {
        if (part.block) part.block_pool->release(part.block);
        return;
    }
    if (mode == Mode::store) {
        if (part.kind == http::BodyPart::Kind::file) {
            stop_storing();
        } else {
            for (std::string_view piece : part.pieces) {
                if (body_.size() + piece.size() > cache_.store.max_object_bytes()) {
                    // Larger than the zone takes: it streams through uncached.
                    stop_storing();
                    break;
                }
                body_ += piece;
            }
        }
        // Before the last part reaches the client, whose next request may
        // start from inside that call.
        if (part.last) finish();
    }
    next().body(part);
}

void CacheStream::end() {
    if (taken_over_) return;
    finish();
    next().end();
}

void CacheStream::abort() {
    // A response cut short (the upstream failed mid-body, the client left)
    // is never stored.
    stop_storing();
}

void CacheStream::finish() {
    if (mode != Mode::store) return;
    // A Content-Length the upstream did not honour: never stored.
    if (length_ && body_.size() != *length_) {
        stop_storing();
        return;
    }
    ObjectFacts facts;
    facts.status = static_cast<uint16_t>(status_);
    facts.revalidate_always = policy_.revalidate_always;
    facts.stored_at = unix_seconds();
    facts.lifetime = policy_.lifetime.count();
    facts.initial_age = policy_.initial_age.count();
    facts.stale_while_revalidate =
        policy_.stale_while_revalidate.value_or(cache_.config.stale_while_revalidate).count();
    facts.stale_if_error = policy_.stale_if_error.value_or(cache_.config.stale_if_error).count();
    facts.key_bytes = static_cast<uint32_t>(key.size());
    facts.head_bytes = static_cast<uint32_t>(head_.size());
    facts.body_bytes = body_.size();
    std::array<std::string_view, 3> parts = {key, head_, body_};
    std::string names;
    ObjectFacts marker;
    bool stored = false;
    {
        core::SharedLock lock(cache_.store.mutex());
        if (policy_.vary.empty()) {
            stored = cache_.store.insert(hash, facts, parts);
        } else {
            for (const std::string& name : policy_.vary) names += name + '\n';
            marker.vary_marker = true;
            marker.stored_at = facts.stored_at;
            marker.key_bytes = facts.key_bytes;
            marker.head_bytes = static_cast<uint32_t>(names.size());
            std::array<std::string_view, 2> marker_parts = {key, names};
            stored = cache_.store.insert(hash, marker, marker_parts) &&
                     cache_.store.insert(variant_, facts, parts);
        }
        // The coded variants of the object replaced were made from it.
        drop_coded_variants(cache_.store, policy_.vary.empty() ? hash : variant_);
    }
    if (stored && cache_.disk != nullptr) {
        if (policy_.vary.empty()) {
            cache_.disk->write(hash, hash, facts, parts);
        } else {
            std::array<std::string_view, 2> marker_parts = {key, names};
            cache_.disk->write(hash, hash, marker, marker_parts);
            cache_.disk->write(variant_, hash, facts, parts);
        }
    }
    stop_storing();
}

}  // namespace portico::cache
