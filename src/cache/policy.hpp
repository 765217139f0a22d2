// What a response's own header fields say about keeping it in the response
// cache (RFC 9111, with RFC 5861's stale-while-revalidate and
// stale-if-error), and how a stored response's age and freshness read
// later. Pure functions of the fields and the clock: the cache's store and
// its request-path steps decide with them, and the unit tests pin them.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace portico::cache {

using Seconds = std::chrono::seconds;

// The request's side of the decision.
struct RequestFacts {
    std::string_view method;  // "GET", "HEAD", ...
    bool has_authorization = false;
    // The request's own Cache-Control (all fields joined by ", "): its
    // no-store keeps the response out of the cache (RFC 9111 5.2.1.5).
    std::string_view cache_control;
};

// The upstream response's side. Every value is "" when the field is absent;
// a field sent several times arrives joined by ", ".
struct ResponseFacts {
    int status = 0;
    std::string_view cache_control;
    std::string_view expires;
    std::string_view date;
    std::string_view age;
    std::string_view vary;
    bool has_set_cookie = false;
};

// The location's `valid` table: status -> freshness where the upstream
// says nothing; status 0 stands for "any".
using ValidTable = std::vector<std::pair<int, Seconds>>;

struct StoragePolicy {
    bool storable = false;
    // Why not, for the debug log and the tests: "method", "no-store",
    // "private", "set-cookie", "authorization", "vary-star", "status",
    // "no-lifetime", "bad-cache-control", "vary-too-large" (more than
    // max_vary_names names or max_vary_length bytes), "bad-vary" (a name
    // that is not a token).
    std::string_view refused;
    // Freshness lifetime (RFC 9111 4.2.1: s-maxage, max-age, Expires - Date,
    // then `valid`), and the age the response already had on arrival
    // (4.2.3: Age and the apparent age from Date).
    Seconds lifetime{0};
    Seconds initial_age{0};
    // no-cache (or max-age=0 with must-revalidate): stored, but never
    // answered without asking the upstream again.
    bool revalidate_always = false;
    // The upstream's own RFC 5861 extensions; they win over the location's.
    // Seconds{0} when the upstream forbids answering stale (no-cache,
    // must-revalidate, proxy-revalidate, s-maxage: RFC 9111 4.2.4) without
    // sending the extension itself: the location's values then do not apply.
    std::optional<Seconds> stale_while_revalidate;
    std::optional<Seconds> stale_if_error;
    // Vary's field names, lowercase, in order, duplicates removed.
    std::vector<std::string> vary;
};

// RFC 9111 1.2.2: a delta-seconds too large to represent is read as 2^31.
inline constexpr Seconds longest_delta{2147483648};

// Vary beyond these refuses the response: each name multiplies the variants
// one key may hold, and a request's fields are compared with every one.
inline constexpr size_t max_vary_names = 16;
inline constexpr size_t max_vary_length = 1024;

// A Cache-Control field's directives (RFC 9111 5.2), request or response.
// Names are case-insensitive; unknown directives are ignored (5.2.3); the
// qualified forms no-cache="field" and private="field" count as the
// unqualified directive (the safe side: the whole response, not the field).
struct CacheControl {
    bool no_store = false;
    bool no_cache = false;
    bool is_private = false;
    bool is_public = false;
    bool must_revalidate = false;
    bool proxy_revalidate = false;
    std::optional<Seconds> max_age;
    std::optional<Seconds> s_maxage;
    std::optional<Seconds> stale_while_revalidate;  // RFC 5861
    std::optional<Seconds> stale_if_error;          // RFC 5861
};

// nullopt when the field is outside RFC 9111's grammar (a directive that is
// not a token, an argument neither a token nor a quoted-string), or when
// max-age, s-maxage, stale-while-revalidate or stale-if-error has no
// argument, a non-numeric one, or two different values (4.2.1: such
// freshness information is invalid). Numbers are clamped to longest_delta.
std::optional<CacheControl> parse_cache_control(std::string_view field);

// Whether a response with this status may be stored at all, by explicit
// freshness or by `valid`'s "any": 200 to 599 but 206 (the cache keeps
// whole objects) and 304 (it updates a stored response, it is not one).
// The statuses `valid` may name one by one are the config loader's choice.
bool status_may_be_stored(int status);

// Whether and for how long the response may be stored. `now` is the
// moment the response arrived. Set-Cookie and Authorization refuse unless
// the upstream explicitly allows it (public, s-maxage, must-revalidate:
// RFC 9111 3.5 for Authorization; Set-Cookie only with `public`).
// A Cache-Control that does not parse refuses ("bad-cache-control").
StoragePolicy decide_storage(const RequestFacts& request, const ResponseFacts& response,
                             const ValidTable& valid, std::chrono::system_clock::time_point now);

// The Age header a hit carries: initial_age plus the seconds since storing.
Seconds current_age(Seconds initial_age, std::chrono::system_clock::time_point stored,
                    std::chrono::system_clock::time_point now);

}  // namespace portico::cache
