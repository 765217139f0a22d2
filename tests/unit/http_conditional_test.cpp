// ETag, If-None-Match, If-Modified-Since, If-Range and HTTP dates
// (RFC 9110 5.6.7, 8.8, 13).
#include <catch2/catch.hpp>

#include <ctime>
#include <optional>
#include <string>
#include <string_view>

#include "core/http_date.hpp"
#include "http/conditional.hpp"

using portico::core::parse_http_date;
using portico::http::if_range_holds;
using portico::http::make_etag;
using portico::http::none_match_fails;
using portico::http::not_modified;

namespace {

std::string http_date(time_t when) {
    char text[portico::core::http_date_length];
    portico::core::format_http_date(when, text);
    return std::string(text, sizeof text);
}

// Sun, 06 Nov 1994 08:49:37 GMT: the RFC's example date.
constexpr time_t rfc_example = 784111777;

}  // namespace

TEST_CASE("make_etag: quoted mtime.nanoseconds-size in hex", "[static][conditional]") {
    CHECK(make_etag({1700000000, 0}, 4096) == "\"6553f100.0-1000\"");
    CHECK(make_etag({1000000000, 999999999}, 36) == "\"3b9aca00.3b9ac9ff-24\"");
    CHECK(make_etag({0, 0}, 0) == "\"0.0-0\"");
    // Sizes above 4 GiB keep every bit.
    CHECK(make_etag({1, 0}, 0x123456789ALL) == "\"1.0-123456789a\"");
}

TEST_CASE("make_etag: changes when the size or the mtime does", "[static][conditional]") {
    const std::string base = make_etag({1700000000, 5000}, 100);
    CHECK(make_etag({1700000000, 5000}, 101) != base);
    CHECK(make_etag({1700000001, 5000}, 100) != base);
    // A rewrite within the same second (nginx's tag would not change).
    CHECK(make_etag({1700000000, 9000}, 100) != base);
    CHECK(make_etag({1700000000, 5000}, 100) == base);
    // Strong, quoted.
    CHECK(base.front() == '"');
    CHECK(base.back() == '"');
    CHECK(base.rfind("W/", 0) == std::string::npos);
}

TEST_CASE("none_match_fails: weak comparison over a list, or *", "[static][conditional]") {
    const std::string etag = "\"abc-1\"";
    struct Case {
        std::string if_none_match;
        bool fails;
    };
    const Case cases[] = {
        {"\"abc-1\"", true},
        {"\"x\", \"abc-1\"", true},
        {"\"x\",\"abc-1\"", true},
        {"\"abc-1\", \"x\"", true},
        {"\"x\" ,\t\"abc-1\" , \"y\"", true},
        {" \"abc-1\" ", true},
        {"*", true},
        // W/ is ignored (weak comparison, RFC 9110 13.1.2)
        {"W/\"abc-1\"", true},
        {"\"x\", W/\"abc-1\"", true},
        // no match
        {"\"abc-2\"", false},
        {"\"abc-10\"", false},
        {"\"abc-\"", false},
        {"\"ABC-1\"", false},
        {"\"x\", \"y\"", false},
        {"W/\"abc-2\"", false},
        {"", false},
        // an entity-tag is quoted: a bare token is not our tag
        {"abc-1", false},
    };
    for (const Case& c : cases) {
        INFO("If-None-Match: '" << c.if_none_match << "' vs " << etag);
        CHECK(none_match_fails(c.if_none_match, etag) == c.fails);
    }
    // W/ ignored on our side too.
    CHECK(none_match_fails("\"abc-1\"", "W/\"abc-1\""));
    CHECK(none_match_fails("W/\"abc-1\"", "W/\"abc-1\""));
    CHECK_FALSE(none_match_fails("\"abc-2\"", "W/\"abc-1\""));
}

TEST_CASE("not_modified: If-None-Match decides, else If-Modified-Since", "[static][conditional]") {
    const time_t mtime = 1700000000;
    const std::string etag = make_etag({mtime, 0}, 42);
    const std::string same = http_date(mtime);
    const std::string older = http_date(mtime - 10);
    const std::string newer = http_date(mtime + 10);

    // Neither header: send the file.
    CHECK_FALSE(not_modified("", "", etag, mtime));

    // If-None-Match alone.
    CHECK(not_modified(etag, "", etag, mtime));
    CHECK(not_modified("*", "", etag, mtime));
    CHECK(not_modified("W/" + etag, "", etag, mtime));
    CHECK(not_modified("\"zz\", " + etag, "", etag, mtime));
    CHECK_FALSE(not_modified("\"zz\"", "", etag, mtime));

    // If-Modified-Since alone: 304 when the file is not newer than the date.
    CHECK(not_modified("", same, etag, mtime));
    CHECK(not_modified("", newer, etag, mtime));
    CHECK_FALSE(not_modified("", older, etag, mtime));
    CHECK_FALSE(not_modified("", "garbage", etag, mtime));
    CHECK_FALSE(not_modified("", "Sun, 99 Nov 2023 22:13:20 GMT", etag, mtime));
    // The obsolete date forms count too.
    CHECK(not_modified("", "Tuesday, 14-Nov-23 22:13:20 GMT", etag, mtime));
    CHECK(not_modified("", "Tue Nov 14 22:13:20 2023", etag, mtime));

    // Both: If-None-Match decides, If-Modified-Since is ignored (RFC 9110 13.2.2).
    CHECK_FALSE(not_modified("\"zz\"", same, etag, mtime));
    CHECK_FALSE(not_modified("\"zz\"", newer, etag, mtime));
    CHECK(not_modified(etag, older, etag, mtime));
    CHECK(not_modified(etag, "garbage", etag, mtime));
}

TEST_CASE("if_range_holds: strong ETag match or the exact Last-Modified date",
          "[static][conditional]") {
    const time_t mtime = 1700000000;
    const std::string etag = make_etag({mtime, 0}, 42);
    CHECK(if_range_holds(etag, etag, mtime));
    CHECK(if_range_holds(http_date(mtime), etag, mtime));
    CHECK(if_range_holds("Tuesday, 14-Nov-23 22:13:20 GMT", etag, mtime));

    CHECK_FALSE(if_range_holds("\"other\"", etag, mtime));
    CHECK_FALSE(if_range_holds(make_etag({mtime, 0}, 43), etag, mtime));
    // Strong comparison: a weak tag never matches (RFC 9110 13.1.5).
    CHECK_FALSE(if_range_holds("W/" + etag, etag, mtime));
    // A date other than Last-Modified, earlier or later.
    CHECK_FALSE(if_range_holds(http_date(mtime - 1), etag, mtime));
    CHECK_FALSE(if_range_holds(http_date(mtime + 1), etag, mtime));
    CHECK_FALSE(if_range_holds("garbage", etag, mtime));
    // If-Range takes one validator, not a list.
    CHECK_FALSE(if_range_holds("\"x\", " + etag, etag, mtime));
}

TEST_CASE("parse_http_date: the three formats of RFC 9110 5.6.7", "[static][conditional]") {
    CHECK(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT") == rfc_example);
    CHECK(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT") == rfc_example);
    CHECK(parse_http_date("Sun Nov  6 08:49:37 1994") == rfc_example);

    CHECK(parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT") == time_t{0});
    CHECK(parse_http_date("Tue, 29 Feb 2000 12:00:00 GMT") == time_t{951825600});
    CHECK(parse_http_date("Saturday, 01-Jan-00 00:00:00 GMT") == time_t{946684800});
    CHECK(parse_http_date("Thu Jan 15 10:00:00 2009") == time_t{1232013600});
}

TEST_CASE("parse_http_date: nothing before 1970 (found by fuzz_header_values)",
          "[static][conditional]") {
    // strptime lets the space before the year match nothing: 39 s, year 94.
    CHECK_FALSE(parse_http_date("Sun Nov  6 08:49:3994"));
    CHECK_FALSE(parse_http_date("Sun, 06 Nov 1969 08:49:37 GMT"));
}

TEST_CASE("parse_http_date: reads back what format_http_date writes", "[static][conditional]") {
    for (time_t when : {time_t{0}, time_t{784111777}, time_t{951782400}, time_t{1000000000},
                        time_t{1700000000}, time_t{2147483647}, time_t{4102444800}}) {
        const std::string text = http_date(when);
        INFO(text);
        CHECK(parse_http_date(text) == when);
    }
}

TEST_CASE("parse_http_date: garbage is nullopt", "[static][conditional]") {
    // An absent field: an empty view whose data is null (found by
    // fuzz_cache_policy: memcpy from null, undefined even for 0 bytes).
    CHECK_FALSE(parse_http_date(std::string_view()).has_value());
    for (std::string_view text : {
             "",
             "yesterday",
             "0",
             "1700000000",
             "Sun, 06 Foo 1994 08:49:37 GMT",
             "Sun, 32 Nov 1994 08:49:37 GMT",
             "Sun, 06 Nov 1994 25:49:37 GMT",
             "Sun, 06 Nov 1994 08:61:37 GMT",
             "Sun, 06 Nov 1994 08:49 GMT",
             "Sun, 06 Nov 1994",
             "Sun, 06 Nov 1994 08:49:37 GMT and more",
             "Sun, 06 Nov 94x 08:49:37 GMT",
             "Sunday, 06-Nov-94 08:49:37",
             "Sun Nov  6 08:49:37",
             "2023-11-14T22:13:20Z",
         }) {
        INFO("'" << std::string(text) << "'");
        CHECK_FALSE(parse_http_date(text).has_value());
    }
}
