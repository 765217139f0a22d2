#include "cache/location_cache.hpp"

#include <time.h>

#include <array>
#include <charconv>
#include <limits>
#include <optional>

#include "core/http_date.hpp"
#include "http/conditional.hpp"
#include "http/header_text.hpp"
#include "http/range.hpp"
#include "http/status.hpp"

namespace portico::cache {

namespace {

constexpr std::array<std::string_view, 6> result_texts = {"HIT",   "MISS",     "EXPIRED",
                                                          "STALE", "UPDATING", "BYPASS"};

// The validators a stored response's head carries, for conditional requests.
struct Validators {
    explicit Validators(const CachedObject& object) : etag(object.etag) {
        if (object.last_modified) {
            modified = *object.last_modified;
            has_modified = true;
        }
    }
    std::string_view etag;
    time_t modified = 0;
    bool has_modified = false;
    bool any() const { return !etag.empty() || has_modified; }
};

void add_head(http::Exchange& exchange, const CachedObject& object, int64_t age,
              const LocationCache& cache, Result result, bool validators_only) {
    for (const auto& [name, value] : object.fields) {
        // A 304 carries what a 200 would, apart from the body's description
        // (RFC 9110 15.4.5).
        if (validators_only && (http::equals_ignore_case(name, "content-type") ||
                                http::equals_ignore_case(name, "content-encoding") ||
                                http::equals_ignore_case(name, "content-range")))
            continue;
        exchange.add_header(name, value);
    }
    char age_text[24];
    auto [end, error] = std::to_chars(age_text, age_text + sizeof age_text, age);
    (void)error;
    exchange.add_header("Age", std::string_view(age_text, static_cast<size_t>(end - age_text)));
    if (!cache.config.status_header.empty())
        exchange.add_header(cache.config.status_header, result_text(result));
}

// `length` bytes of the object's body from `offset`: from its memfd when it
// has one (sendfile), else from memory. The object lives until they are sent.
void send_body(http::Exchange& exchange, std::shared_ptr<const CachedObject> object,
               uint64_t offset, uint64_t length) {
    if (object->body_file) {
        int fd = object->body_file.get();
        exchange.send_file(fd, static_cast<off_t>(offset), length, std::move(object));
        return;
    }
    std::string_view bytes = object->body().substr(offset, length);
    exchange.send_owned_body(bytes, std::move(object));
}

}  // namespace

std::string_view result_text(Result result) {
    return result_texts[static_cast<size_t>(result)];
}

void LocationCache::record(const http::Request& request, Result result) const {
    request.cache_result = result_text(result);
    counters.count_cache(location, result);
}

KeyHash variant_key(std::string_view key_text, const std::vector<std::string_view>& names,
                    const http::Request& request) {
    std::string variant(key_text);
    for (std::string_view name : names) {
        variant += '\0';
        variant += name;
        variant += '\0';
        variant += request.header(name);
    }
    return hash_key(variant);
}

std::shared_ptr<const CachedObject> LocationCache::lookup(KeyHash key, std::string_view key_text,
                                                          const http::Request& request,
                                                          KeyHash* looked_up) const {
    core::SharedLock lock(store.mutex());
    std::shared_ptr<const CachedObject> object = copies.find(store, key);
    if (object && object->facts().vary_marker) {
        key = variant_key(key_text, object->vary_names(), request);
        object = copies.find(store, key);
    }
    if (object && object->facts().vary_marker) return nullptr;
    if (looked_up != nullptr) *looked_up = key;
    return object;
}

int64_t unix_seconds() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

uint64_t monotonic_ms() {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<uint64_t>(now.tv_sec) * 1000 + static_cast<uint64_t>(now.tv_nsec) / 1000000;
}

int64_t age_of(const CachedObject& object, int64_t now) {
    int64_t resident = now > object.facts().stored_at ? now - object.facts().stored_at : 0;
    return object.facts().initial_age + resident;
}

void answer_from_object(http::Exchange& exchange, std::shared_ptr<const CachedObject> object,
                        int64_t age, const LocationCache& cache, Result result) {
    const http::Request& request = exchange.request();
    cache.record(request, result);
    const CachedObject& stored = *object;
    int status = stored.facts().status;
    Validators validators(stored);
    // RFC 9110 13.2.2: conditions apply to a 2xx the request would get.
    if (status == 200 && validators.any() &&
        (!request.header("if-none-match").empty() ||
         !request.header("if-modified-since").empty()) &&
        http::not_modified(
            request.header("if-none-match"), request.header("if-modified-since"), validators.etag,
            validators.has_modified ? validators.modified : std::numeric_limits<time_t>::max())) {
        exchange.begin_response(304, 0);
        add_head(exchange, stored, age, cache, result, true);
        exchange.end_response();
        return;
    }
    std::string_view body = stored.body();
    if (std::string_view range_header = request.header("range");
        status == 200 && !range_header.empty() &&
        http::if_range_holds(request.header("if-range"), validators.etag, validators.modified)) {
        http::ByteRange range = http::parse_byte_range(range_header, body.size());
        if (range.kind == http::ByteRange::Kind::unsatisfiable) {
            exchange.begin_response(416, 0);
            exchange.add_header("Content-Range", "bytes */" + std::to_string(body.size()));
            exchange.end_response();
            return;
        }
        if (range.kind == http::ByteRange::Kind::partial) {
            exchange.begin_response(206, range.length());
            add_head(exchange, stored, age, cache, result, false);
            exchange.add_header("Content-Range", "bytes " + std::to_string(range.first) + "-" +
                                                     std::to_string(range.last) + "/" +
                                                     std::to_string(body.size()));
            send_body(exchange, std::move(object), range.first, range.length());
            exchange.end_response();
            return;
        }
    }
    exchange.begin_response(status, body.size());
    add_head(exchange, stored, age, cache, result, false);
    if (!body.empty() && !http::is_bodyless_status(status))
        send_body(exchange, std::move(object), 0, body.size());
    exchange.end_response();
}

}  // namespace portico::cache
