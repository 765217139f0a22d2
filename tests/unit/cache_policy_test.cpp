// What the upstream's fields say about storing a response (RFC 9111, RFC
// 5861): Cache-Control's grammar and directives, every refusal, the lifetime
// precedence s-maxage > max-age > Expires > valid, and the age arithmetic.
#include <catch2/catch.hpp>

#include <chrono>
#include <ctime>
#include <string>
#include <string_view>

#include "cache/policy.hpp"
#include "core/http_date.hpp"

using portico::cache::CacheControl;
using portico::cache::current_age;
using portico::cache::decide_storage;
using portico::cache::longest_delta;
using portico::cache::parse_cache_control;
using portico::cache::RequestFacts;
using portico::cache::ResponseFacts;
using portico::cache::Seconds;
using portico::cache::status_may_be_stored;
using portico::cache::StoragePolicy;
using portico::cache::ValidTable;

namespace {

constexpr time_t arrival = 1700000000;
const auto now = std::chrono::system_clock::from_time_t(arrival);

std::string http_date(time_t when) {
    char text[portico::core::http_date_length];
    portico::core::format_http_date(when, text);
    return std::string(text, sizeof text);
}

const RequestFacts get{"GET", false, ""};

ResponseFacts ok_with(std::string_view cache_control) {
    ResponseFacts response;
    response.status = 200;
    response.cache_control = cache_control;
    return response;
}

StoragePolicy decide(const ResponseFacts& response, const ValidTable& valid = {},
                     const RequestFacts& request = get) {
    return decide_storage(request, response, valid, now);
}

std::string_view refusal(const ResponseFacts& response, const ValidTable& valid = {},
                         const RequestFacts& request = get) {
    StoragePolicy policy = decide(response, valid, request);
    CHECK(policy.storable == policy.refused.empty());
    return policy.refused;
}

}  // namespace

TEST_CASE("parse_cache_control: every directive, case-insensitive", "[cache][policy]") {
    std::optional<CacheControl> control = parse_cache_control(
        "No-Store, NO-CACHE, private, Public, must-revalidate, Proxy-Revalidate, max-age=60, "
        "S-MAXAGE=120, stale-while-revalidate=5, Stale-If-Error=3600");
    REQUIRE(control);
    CHECK(control->no_store);
    CHECK(control->no_cache);
    CHECK(control->is_private);
    CHECK(control->is_public);
    CHECK(control->must_revalidate);
    CHECK(control->proxy_revalidate);
    CHECK(control->max_age == Seconds{60});
    CHECK(control->s_maxage == Seconds{120});
    CHECK(control->stale_while_revalidate == Seconds{5});
    CHECK(control->stale_if_error == Seconds{3600});

    std::optional<CacheControl> empty = parse_cache_control("");
    REQUIRE(empty);
    CHECK_FALSE(empty->no_store);
    CHECK_FALSE(empty->is_public);
    CHECK_FALSE(empty->max_age);
    CHECK_FALSE(empty->stale_if_error);
}

TEST_CASE("parse_cache_control: list syntax, quoted arguments, unknown directives",
          "[cache][policy]") {
    // Empty members and spaces around them are allowed (RFC 9110 5.6.1).
    std::optional<CacheControl> control = parse_cache_control(" , max-age=5 ,, \tpublic\t, ");
    REQUIRE(control);
    CHECK(control->max_age == Seconds{5});
    CHECK(control->is_public);
    // The quoted form of a number is read too (RFC 9111 5.2).
    CHECK(parse_cache_control("max-age=\"30\"")->max_age == Seconds{30});
    // Extensions are ignored, quoted commas do not split the list.
    control =
        parse_cache_control("immutable, ext=\"a, b, no-store\", community=\"UCI\", max-age=7");
    REQUIRE(control);
    CHECK_FALSE(control->no_store);
    CHECK(control->max_age == Seconds{7});
    // A quoted-pair may escape a quote.
    CHECK(parse_cache_control("ext=\"say \\\"hi\\\"\", no-store")->no_store);
}

TEST_CASE("parse_cache_control: the qualified no-cache and private cover the whole response",
          "[cache][policy]") {
    std::optional<CacheControl> control = parse_cache_control("no-cache=\"Set-Cookie, X-Token\"");
    REQUIRE(control);
    CHECK(control->no_cache);
    control = parse_cache_control("private=\"Authorization\", max-age=60");
    REQUIRE(control);
    CHECK(control->is_private);
    CHECK(parse_cache_control("no-cache=Set-Cookie")->no_cache);
}

TEST_CASE("parse_cache_control: numbers clamp at 2^31 (RFC 9111 1.2.2)", "[cache][policy]") {
    CHECK(parse_cache_control("max-age=2147483647")->max_age == Seconds{2147483647});
    CHECK(parse_cache_control("max-age=2147483648")->max_age == longest_delta);
    CHECK(parse_cache_control("max-age=99999999999999999999999999999999")->max_age ==
          longest_delta);
    CHECK(parse_cache_control("s-maxage=18446744073709551617")->s_maxage == longest_delta);
    CHECK(parse_cache_control("max-age=0")->max_age == Seconds{0});
    CHECK(parse_cache_control("max-age=007")->max_age == Seconds{7});
}

TEST_CASE("parse_cache_control: duplicated or invalid delta-seconds", "[cache][policy]") {
    // The same value twice (two layers adding the same field) is harmless.
    CHECK(parse_cache_control("max-age=60, max-age=60")->max_age == Seconds{60});
    for (std::string_view field : {
             "max-age=60, max-age=120",
             "max-age",
             "max-age=",
             "max-age=\"\"",
             "max-age=-1",
             "max-age=1.5",
             "max-age=60s",
             "max-age=0x10",
             "max-age=\"6 0\"",
             "s-maxage=abc",
             "s-maxage=1, s-maxage=2",
             "stale-while-revalidate",
             "stale-while-revalidate=soon",
             "stale-if-error=-5",
             "stale-if-error=1, stale-if-error=2",
         }) {
        INFO(std::string(field));
        CHECK_FALSE(parse_cache_control(field));
    }
}

TEST_CASE("parse_cache_control: garbage", "[cache][policy]") {
    for (std::string_view field : {
             "max-age = 60",
             "max-age =60",
             "max-age= 60",
             "=60",
             "public; max-age=60",
             "max-age=60 public",
             "no store",
             "\"public\"",
             "max-age=\"60",
             "ext=\"unterminated\\\"",
             "ext=\"a\"b",
             "ext=a=b",
             "pub(lic)",
             "max-age=60, @",
             "no-cache=\"\x01\"",
             "\x7f",
         }) {
        INFO(std::string(field));
        CHECK_FALSE(parse_cache_control(field));
    }
}

TEST_CASE("status_may_be_stored: final statuses but 206 and 304", "[cache][policy]") {
    for (int status :
         {200, 203, 204, 300, 301, 302, 307, 308, 404, 405, 410, 414, 500, 501, 502, 503, 599}) {
        INFO(status);
        CHECK(status_may_be_stored(status));
    }
    for (int status : {0, 100, 101, 103, 199, 206, 304, 600, 999, -200}) {
        INFO(status);
        CHECK_FALSE(status_may_be_stored(status));
    }
}

TEST_CASE("decide_storage: max-age, s-maxage and the shared cache", "[cache][policy]") {
    StoragePolicy policy = decide(ok_with("max-age=60"));
    CHECK(policy.storable);
    CHECK(policy.refused.empty());
    CHECK(policy.lifetime == Seconds{60});
    CHECK(policy.initial_age == Seconds{0});
    CHECK_FALSE(policy.revalidate_always);
    CHECK_FALSE(policy.stale_while_revalidate);
    CHECK_FALSE(policy.stale_if_error);
    CHECK(policy.vary.empty());

    CHECK(decide(ok_with("public, max-age=10")).lifetime == Seconds{10});
    CHECK(decide(ok_with("max-age=99999999999")).lifetime == longest_delta);
}

TEST_CASE("decide_storage: lifetime precedence s-maxage > max-age > Expires > valid",
          "[cache][policy]") {
    const ValidTable valid{{200, Seconds{600}}};
    const std::string expires_in_300 = http_date(arrival + 300);
    const std::string date_now = http_date(arrival);

    ResponseFacts response = ok_with("max-age=60, s-maxage=30");
    response.expires = expires_in_300;
    response.date = date_now;
    CHECK(decide(response, valid).lifetime == Seconds{30});

    response.cache_control = "max-age=60";
    CHECK(decide(response, valid).lifetime == Seconds{60});

    response.cache_control = "public";
    CHECK(decide(response, valid).lifetime == Seconds{300});

    response.expires = "";
    CHECK(decide(response, valid).lifetime == Seconds{600});

    // The upstream's zero wins over `valid` too: explicit, stale at once.
    response.cache_control = "max-age=0";
    StoragePolicy zero = decide(response, valid);
    CHECK(zero.storable);
    CHECK(zero.lifetime == Seconds{0});
    response.cache_control = "s-maxage=0, max-age=60";
    CHECK(decide(response, valid).lifetime == Seconds{0});
}

TEST_CASE("decide_storage: Expires minus Date", "[cache][policy]") {
    // ResponseFacts holds views: the dates live here.
    const std::string hour_ago = http_date(arrival - 3600),
                      hour_ago_plus_120 = http_date(arrival - 3600 + 120);
    const std::string in_90 = http_date(arrival + 90), at_arrival = http_date(arrival),
                      ten_ago = http_date(arrival - 10);
    ResponseFacts response = ok_with("");
    // Date an hour behind our clock: the lifetime is the upstream's
    // difference, not Expires minus our arrival time.
    response.date = hour_ago;
    response.expires = hour_ago_plus_120;
    CHECK(decide(response).lifetime == Seconds{120});

    // Without Date (or with one that does not parse), the arrival time.
    response.date = "";
    response.expires = in_90;
    CHECK(decide(response).lifetime == Seconds{90});
    response.date = "yesterday";
    CHECK(decide(response).lifetime == Seconds{90});

    // Expires at or before Date: stored, already stale.
    response.date = at_arrival;
    response.expires = ten_ago;
    StoragePolicy past = decide(response, {{200, Seconds{600}}});
    CHECK(past.storable);
    CHECK(past.lifetime == Seconds{0});
    response.expires = at_arrival;
    CHECK(decide(response).lifetime == Seconds{0});

    // The other date formats (RFC 9110 5.6.7).
    response.date = "Sunday, 06-Nov-94 08:49:37 GMT";
    response.expires = "Sun Nov  6 08:59:37 1994";
    CHECK(decide(response).lifetime == Seconds{600});
}

TEST_CASE("decide_storage: an invalid Expires means already expired (RFC 9111 5.3)",
          "[cache][policy]") {
    const ValidTable valid{{0, Seconds{600}}};
    for (std::string_view expires :
         {"0", "-1", "never", "Thu, 01 Jan 1970", "Sun, 06 Nov 1994 08:49:37 GMT, Mon"}) {
        INFO(std::string(expires));
        ResponseFacts response = ok_with("");
        response.expires = expires;
        StoragePolicy policy = decide(response, valid);
        CHECK(policy.storable);
        // Not `valid`'s 600: the upstream said something.
        CHECK(policy.lifetime == Seconds{0});
    }
    // max-age still wins over a broken Expires (RFC 9111 5.3).
    ResponseFacts response = ok_with("max-age=60");
    response.expires = "0";
    CHECK(decide(response).lifetime == Seconds{60});
}

TEST_CASE("decide_storage: valid applies only where the upstream says nothing", "[cache][policy]") {
    const ValidTable valid{{200, Seconds{600}}, {404, Seconds{60}}, {0, Seconds{5}}};
    ResponseFacts response = ok_with("");
    CHECK(decide(response, valid).lifetime == Seconds{600});
    response.status = 404;
    CHECK(decide(response, valid).lifetime == Seconds{60});
    // "any" covers the rest, 5xx included (as nginx's `any` does).
    response.status = 500;
    CHECK(decide(response, valid).lifetime == Seconds{5});
    response.status = 301;
    CHECK(decide(response, valid).lifetime == Seconds{5});
    // The exact status wins wherever "any" sits in the table.
    CHECK(decide(ok_with(""), {{0, Seconds{5}}, {200, Seconds{600}}}).lifetime == Seconds{600});
    // Directives that say nothing about freshness leave `valid` in charge.
    CHECK(decide(ok_with("public, must-revalidate"), valid).lifetime == Seconds{600});
}

TEST_CASE("decide_storage: no lifetime anywhere refuses", "[cache][policy]") {
    CHECK(refusal(ok_with("")) == "no-lifetime");
    CHECK(refusal(ok_with("public")) == "no-lifetime");
    ResponseFacts not_found = ok_with("");
    not_found.status = 404;
    CHECK(refusal(not_found, {{200, Seconds{600}}}) == "no-lifetime");
}

TEST_CASE("decide_storage: refusals on the request's side", "[cache][policy]") {
    for (std::string_view method : {"POST", "PUT", "DELETE", "PATCH", "OPTIONS", "get", ""}) {
        INFO(std::string(method));
        CHECK(refusal(ok_with("max-age=60"), {}, RequestFacts{method, false, ""}) == "method");
    }
    CHECK(decide(ok_with("max-age=60"), {}, RequestFacts{"HEAD", false, ""}).storable);

    CHECK(refusal(ok_with("max-age=60"), {}, RequestFacts{"GET", false, "no-store"}) == "no-store");
    CHECK(refusal(ok_with("max-age=60"), {}, RequestFacts{"GET", false, "max-age=0, No-Store"}) ==
          "no-store");
    CHECK(refusal(ok_with("max-age=60"), {}, RequestFacts{"GET", false, "max-age=="}) ==
          "bad-cache-control");
    // A request's no-cache asks for a fresh answer; the answer may be stored.
    CHECK(decide(ok_with("max-age=60"), {}, RequestFacts{"GET", false, "no-cache"}).storable);
}

TEST_CASE("decide_storage: no-store, private and a bad Cache-Control refuse", "[cache][policy]") {
    const ValidTable valid{{0, Seconds{600}}};
    CHECK(refusal(ok_with("no-store"), valid) == "no-store");
    CHECK(refusal(ok_with("max-age=60, no-store"), valid) == "no-store");
    CHECK(refusal(ok_with("public, no-store"), valid) == "no-store");
    CHECK(refusal(ok_with("private"), valid) == "private");
    CHECK(refusal(ok_with("private, max-age=60"), valid) == "private");
    CHECK(refusal(ok_with("public, private, s-maxage=60"), valid) == "private");
    CHECK(refusal(ok_with("private=\"X-User\", max-age=60"), valid) == "private");
    CHECK(refusal(ok_with("max-age=60, max-age=70"), valid) == "bad-cache-control");
    CHECK(refusal(ok_with("max-age=soon"), valid) == "bad-cache-control");
    CHECK(refusal(ok_with("max-age=60;public"), valid) == "bad-cache-control");
    CHECK(refusal(ok_with("\xff\xfe"), valid) == "bad-cache-control");
}

TEST_CASE("decide_storage: statuses", "[cache][policy]") {
    const ValidTable valid{{0, Seconds{600}}};
    for (int status : {206, 304, 100, 101, 0, 600}) {
        INFO(status);
        ResponseFacts response = ok_with("max-age=60");
        response.status = status;
        CHECK(refusal(response, valid) == "status");
    }
    // Any other final status with explicit freshness (RFC 9111 3).
    for (int status : {200, 201, 302, 307, 403, 418, 500, 503}) {
        INFO(status);
        ResponseFacts response = ok_with("max-age=60");
        response.status = status;
        CHECK(decide(response).storable);
    }
}

TEST_CASE("decide_storage: Authorization needs public, s-maxage or must-revalidate (RFC 9111 3.5)",
          "[cache][policy]") {
    const RequestFacts with_credentials{"GET", true, ""};
    const ValidTable valid{{200, Seconds{600}}};
    CHECK(refusal(ok_with(""), valid, with_credentials) == "authorization");
    CHECK(refusal(ok_with("max-age=60"), valid, with_credentials) == "authorization");
    CHECK(refusal(ok_with("proxy-revalidate, max-age=60"), valid, with_credentials) ==
          "authorization");
    CHECK(decide(ok_with("public"), valid, with_credentials).storable);
    CHECK(decide(ok_with("s-maxage=60"), valid, with_credentials).storable);
    CHECK(decide(ok_with("must-revalidate, max-age=60"), valid, with_credentials).storable);
}

TEST_CASE("decide_storage: Set-Cookie is stored only with public", "[cache][policy]") {
    ResponseFacts response = ok_with("max-age=60");
    response.has_set_cookie = true;
    CHECK(refusal(response) == "set-cookie");
    CHECK(refusal(response, {{200, Seconds{600}}}) == "set-cookie");
    response.cache_control = "s-maxage=60";
    CHECK(refusal(response) == "set-cookie");
    response.cache_control = "public, max-age=60";
    CHECK(decide(response).storable);
}

TEST_CASE("decide_storage: Vary's names, lower case, duplicates removed", "[cache][policy]") {
    ResponseFacts response = ok_with("max-age=60");
    response.vary = "Accept-Encoding, accept-language,ACCEPT-ENCODING, , X-Device";
    StoragePolicy policy = decide(response);
    REQUIRE(policy.storable);
    CHECK(policy.vary ==
          std::vector<std::string>{"accept-encoding", "accept-language", "x-device"});

    response.vary = "*";
    CHECK(refusal(response) == "vary-star");
    response.vary = "Accept-Encoding, *";
    CHECK(refusal(response) == "vary-star");
    response.vary = "Accept Encoding";
    CHECK(refusal(response) == "bad-vary");
    response.vary = "Accept-Encoding, \"Cookie\"";
    CHECK(refusal(response) == "bad-vary");
}

TEST_CASE("decide_storage: an enormous Vary refuses", "[cache][policy]") {
    ResponseFacts response = ok_with("max-age=60");
    std::string sixteen;
    for (int i = 0; i < 16; ++i) sixteen += (i ? ", x-field-" : "x-field-") + std::to_string(i);
    response.vary = sixteen;
    CHECK(decide(response).vary.size() == 16);

    std::string seventeen = sixteen + ", x-field-16";
    response.vary = seventeen;
    CHECK(refusal(response) == "vary-too-large");

    // Sixteen names repeated: duplicates do not count.
    std::string repeated = sixteen + ", " + sixteen;
    response.vary = repeated;
    CHECK(decide(response).vary.size() == 16);

    std::string long_name(1024, 'a');
    response.vary = long_name;
    CHECK(decide(response).storable);
    std::string too_long(1025, 'a');
    response.vary = too_long;
    CHECK(refusal(response) == "vary-too-large");
}

TEST_CASE("decide_storage: no-cache and must-revalidate", "[cache][policy]") {
    // no-cache stores for revalidation, with or without a lifetime.
    StoragePolicy policy = decide(ok_with("no-cache"));
    CHECK(policy.storable);
    CHECK(policy.revalidate_always);
    CHECK(policy.lifetime == Seconds{0});
    CHECK(decide(ok_with("no-cache, max-age=60")).revalidate_always);
    CHECK(decide(ok_with("no-cache=\"Set-Cookie\", max-age=60")).revalidate_always);

    CHECK(decide(ok_with("max-age=0, must-revalidate")).revalidate_always);
    CHECK(decide(ok_with("s-maxage=0, proxy-revalidate")).revalidate_always);
    CHECK_FALSE(decide(ok_with("max-age=60, must-revalidate")).revalidate_always);
    CHECK_FALSE(decide(ok_with("max-age=0")).revalidate_always);
}

TEST_CASE("decide_storage: stale-while-revalidate and stale-if-error (RFC 5861)",
          "[cache][policy]") {
    StoragePolicy policy =
        decide(ok_with("max-age=60, stale-while-revalidate=30, stale-if-error=86400"));
    CHECK(policy.stale_while_revalidate == Seconds{30});
    CHECK(policy.stale_if_error == Seconds{86400});

    // What forbids answering stale (RFC 9111 4.2.4) shows as zero, so the
    // location's own values do not apply.
    for (std::string_view field : {"max-age=60, must-revalidate", "max-age=60, proxy-revalidate",
                                   "s-maxage=60", "no-cache"}) {
        INFO(std::string(field));
        StoragePolicy strict = decide(ok_with(field));
        CHECK(strict.stale_while_revalidate == Seconds{0});
        CHECK(strict.stale_if_error == Seconds{0});
    }
    // Unless the upstream allows it itself.
    policy = decide(ok_with("s-maxage=60, stale-if-error=600"));
    CHECK(policy.stale_if_error == Seconds{600});
    CHECK(policy.stale_while_revalidate == Seconds{0});
    // Clamped like the rest.
    CHECK(decide(ok_with("max-age=1, stale-if-error=1e9")).refused == "bad-cache-control");
    CHECK(decide(ok_with("max-age=1, stale-if-error=100000000000")).stale_if_error ==
          longest_delta);
}

TEST_CASE("decide_storage: the initial age from Age and Date (RFC 9111 4.2.3)", "[cache][policy]") {
    ResponseFacts response = ok_with("max-age=600");
    response.age = "100";
    CHECK(decide(response).initial_age == Seconds{100});

    // The apparent age from Date, when larger.
    const std::string before = http_date(arrival - 250), after = http_date(arrival + 50);
    response.date = before;
    CHECK(decide(response).initial_age == Seconds{250});
    response.age = "400";
    CHECK(decide(response).initial_age == Seconds{400});

    // A Date in the future is no negative age.
    response.age = "";
    response.date = after;
    CHECK(decide(response).initial_age == Seconds{0});

    // Of a list, the first member; what is not a non-negative integer is
    // ignored (RFC 9111 5.1).
    response.date = "";
    response.age = "30, 40";
    CHECK(decide(response).initial_age == Seconds{30});
    for (std::string_view age : {"-5", "abc", "1.5", "", " ", "0x20", "\"20\""}) {
        INFO(std::string(age));
        response.age = age;
        CHECK(decide(response).initial_age == Seconds{0});
    }
    response.age = "99999999999999999999999";
    CHECK(decide(response).initial_age == longest_delta);

    // An age past the lifetime: stored, stale on arrival.
    response.age = "700";
    StoragePolicy old = decide(response);
    CHECK(old.storable);
    CHECK(old.initial_age > old.lifetime);

    // A Date that is garbage gives no apparent age.
    response.age = "";
    response.date = "Sun, 06 Nov 1994";
    CHECK(decide(response).initial_age == Seconds{0});
}

TEST_CASE("current_age: initial age plus resident time", "[cache][policy]") {
    const auto stored = now;
    CHECK(current_age(Seconds{0}, stored, stored) == Seconds{0});
    CHECK(current_age(Seconds{10}, stored, stored + std::chrono::seconds{5}) == Seconds{15});
    // Whole seconds, rounded down.
    CHECK(current_age(Seconds{0}, stored, stored + std::chrono::milliseconds{1999}) == Seconds{1});
    // A clock set back never rejuvenates.
    CHECK(current_age(Seconds{10}, stored, stored - std::chrono::hours{1}) == Seconds{10});
    // Clamped.
    CHECK(current_age(longest_delta, stored, stored + std::chrono::hours{24 * 365 * 100}) ==
          longest_delta);
}
