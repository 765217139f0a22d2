// Range: bytes=... against a file of known size (RFC 9110 14.1, 14.2).
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <string_view>

#include "http/range.hpp"

using portico::http::ByteRange;
using portico::http::parse_byte_range;
using Kind = ByteRange::Kind;

namespace {

struct Partial {
    std::string_view header;
    uint64_t size;
    uint64_t first;
    uint64_t last;
};

struct Other {
    std::string_view header;
    uint64_t size;
    Kind kind;
};

const char* name(Kind kind) {
    switch (kind) {
    case Kind::whole:
        return "whole";
    case Kind::partial:
        return "partial";
    case Kind::unsatisfiable:
        return "unsatisfiable";
    }
    return "?";
}

}  // namespace

TEST_CASE("parse_byte_range: one satisfiable range gives partial", "[static][range]") {
    const Partial cases[] = {
        // first-last
        {"bytes=0-9", 100, 0, 9},
        {"bytes=0-0", 100, 0, 0},
        {"bytes=99-99", 100, 99, 99},
        {"bytes=10-19", 100, 10, 19},
        {"bytes=0-99", 100, 0, 99},
        // last past the end is cut to the end (RFC 9110 14.1.2)
        {"bytes=50-500", 100, 50, 99},
        {"bytes=0-1000000", 100, 0, 99},
        // first- (to the end)
        {"bytes=10-", 100, 10, 99},
        {"bytes=0-", 100, 0, 99},
        {"bytes=99-", 100, 99, 99},
        // -suffix (the last N bytes)
        {"bytes=-5", 100, 95, 99},
        {"bytes=-1", 100, 99, 99},
        {"bytes=-100", 100, 0, 99},
        // a suffix longer than the file is the whole file, still 206
        {"bytes=-200", 100, 0, 99},
        // one-byte file
        {"bytes=0-0", 1, 0, 0},
        {"bytes=-1", 1, 0, 0},
        {"bytes=0-", 1, 0, 0},
        // big files: no 32-bit truncation
        {"bytes=5000000000-5000000009", 6000000000ULL, 5000000000ULL, 5000000009ULL},
        {"bytes=-10", 6000000000ULL, 5999999990ULL, 5999999999ULL},
        {"bytes=4294967296-", 4294967306ULL, 4294967296ULL, 4294967305ULL},
        // leading zeros are still decimal
        {"bytes=007-010", 100, 7, 10},
    };
    for (const Partial& c : cases) {
        INFO("Range: " << std::string(c.header) << " on " << c.size << " bytes");
        const ByteRange range = parse_byte_range(c.header, c.size);
        INFO("kind: " << name(range.kind));
        REQUIRE(range.kind == Kind::partial);
        CHECK(range.first == c.first);
        CHECK(range.last == c.last);
        CHECK(range.length() == c.last - c.first + 1);
    }
}

TEST_CASE("parse_byte_range: optional whitespace is allowed", "[static][range]") {
    // Field values are trimmed, and list elements may be surrounded by OWS.
    const Partial cases[] = {
        {"bytes=0-9 ", 100, 0, 9},  {"bytes= 0-9", 100, 0, 9},   {"bytes=\t0-9\t", 100, 0, 9},
        {"bytes= -5", 100, 95, 99}, {"bytes=10- ", 100, 10, 99},
    };
    for (const Partial& c : cases) {
        INFO("Range: '" << std::string(c.header) << "'");
        const ByteRange range = parse_byte_range(c.header, c.size);
        INFO("kind: " << name(range.kind));
        REQUIRE(range.kind == Kind::partial);
        CHECK(range.first == c.first);
        CHECK(range.last == c.last);
    }
}

TEST_CASE("parse_byte_range: the range unit is case-insensitive", "[static][range]") {
    // RFC 9110 14.1: "Range unit names are case-insensitive".
    for (std::string_view header : {"Bytes=0-9", "BYTES=0-9"}) {
        INFO("Range: " << std::string(header));
        const ByteRange range = parse_byte_range(header, 100);
        REQUIRE(range.kind == Kind::partial);
        CHECK(range.first == 0);
        CHECK(range.last == 9);
    }
}

TEST_CASE("parse_byte_range: past the end is unsatisfiable", "[static][range]") {
    const Other cases[] = {
        {"bytes=100-", 100, Kind::unsatisfiable},
        {"bytes=100-200", 100, Kind::unsatisfiable},
        {"bytes=100-100", 100, Kind::unsatisfiable},
        {"bytes=1000-", 100, Kind::unsatisfiable},
        {"bytes=18446744073709551615-18446744073709551615", 100, Kind::unsatisfiable},
        {"bytes=1-", 1, Kind::unsatisfiable},
    };
    for (const Other& c : cases) {
        INFO("Range: " << std::string(c.header) << " on " << c.size << " bytes");
        const ByteRange range = parse_byte_range(c.header, c.size);
        CHECK(name(range.kind) == std::string(name(c.kind)));
    }
}

TEST_CASE("parse_byte_range: absent, foreign, malformed or several ranges give whole",
          "[static][range]") {
    const std::string_view headers[] = {
        // absent
        "",
        // not the bytes unit
        "items=0-9",
        "bytesx=0-9",
        "byte=0-9",
        "none",
        // malformed
        "bytes",
        "bytes=",
        "bytes=-",
        "bytes=a-b",
        "bytes=0-b",
        "bytes=a-9",
        "bytes=5-2",  // last before first: an invalid range-spec
        "bytes=0-9x",
        "bytes=0x0-9",
        "bytes=1-2-3",
        "bytes=--5",
        "bytes=+1-5",
        "bytes=-+5",
        "bytes=1.5-9",
        "bytes 0-9",
        "bytes:0-9",
        "bytes==0-9",
        "=0-9",
        // several ranges: answered whole (no multipart)
        "bytes=0-1,5-6",
        "bytes=0-1, 5-6",
        "bytes=0-0,-1",
        "bytes=0-,0-",
        "bytes=-1,-2",
        "bytes=0-9,90-",
    };
    for (std::string_view header : headers) {
        INFO("Range: '" << std::string(header) << "'");
        const ByteRange range = parse_byte_range(header, 100);
        CHECK(name(range.kind) == std::string(name(Kind::whole)));
    }
}

TEST_CASE("parse_byte_range: numbers too big for 64 bits never wrap into a wrong range",
          "[static][range]") {
    // 2^64 wraps to 0, 2^64 + 5 to 5, 2^64 + 1 to 1: an implementation that
    // overflows silently would return those small, wrong ranges.
    SECTION("huge last position: the whole file, as 206 or as 200") {
        for (std::string_view header :
             {"bytes=0-18446744073709551616", "bytes=0-99999999999999999999999999",
              "bytes=0-18446744073709551621"}) {
            INFO("Range: " << std::string(header));
            const ByteRange range = parse_byte_range(header, 100);
            INFO("kind: " << name(range.kind) << " " << range.first << "-" << range.last);
            const bool whole = range.kind == Kind::whole;
            const bool all = range.kind == Kind::partial && range.first == 0 && range.last == 99;
            CHECK((whole || all));
        }
    }
    SECTION("huge first position: never a partial range") {
        for (std::string_view header :
             {"bytes=18446744073709551616-", "bytes=18446744073709551621-18446744073709551630",
              "bytes=99999999999999999999999999-"}) {
            INFO("Range: " << std::string(header));
            const ByteRange range = parse_byte_range(header, 100);
            INFO("kind: " << name(range.kind) << " " << range.first << "-" << range.last);
            CHECK(range.kind != Kind::partial);
        }
    }
    SECTION("huge suffix: the whole file, as 206 or as 200") {
        for (std::string_view header :
             {"bytes=-18446744073709551617", "bytes=-99999999999999999999999999"}) {
            INFO("Range: " << std::string(header));
            const ByteRange range = parse_byte_range(header, 100);
            INFO("kind: " << name(range.kind) << " " << range.first << "-" << range.last);
            const bool whole = range.kind == Kind::whole;
            const bool all = range.kind == Kind::partial && range.first == 0 && range.last == 99;
            CHECK((whole || all));
        }
    }
    SECTION("the largest 64-bit value is fine as a last position") {
        const ByteRange range = parse_byte_range("bytes=3-18446744073709551615", 100);
        REQUIRE(range.kind == Kind::partial);
        CHECK(range.first == 3);
        CHECK(range.last == 99);
    }
}

TEST_CASE("parse_byte_range: a zero-length file has no partial range", "[static][range]") {
    // Content-Range cannot describe a range of an empty representation.
    for (std::string_view header : {"bytes=0-0", "bytes=0-", "bytes=-5", "bytes=0-9"}) {
        INFO("Range: " << std::string(header));
        const ByteRange range = parse_byte_range(header, 0);
        CHECK(range.kind != Kind::partial);
    }
    // first-pos 0 is not below the length 0: unsatisfiable (RFC 9110 14.1.1).
    CHECK(parse_byte_range("bytes=0-", 0).kind == Kind::unsatisfiable);
    CHECK(parse_byte_range("bytes=5-9", 0).kind == Kind::unsatisfiable);
    CHECK(parse_byte_range("", 0).kind == Kind::whole);
    CHECK(parse_byte_range("bytes=a-b", 0).kind == Kind::whole);
}

TEST_CASE("parse_byte_range: a zero-length suffix is never partial", "[static][range]") {
    // "bytes=-0" asks for no bytes: unsatisfiable per RFC 9110 14.1.1 (or
    // ignored); never a range with last < first.
    const ByteRange range = parse_byte_range("bytes=-0", 100);
    CHECK(range.kind != Kind::partial);
}
