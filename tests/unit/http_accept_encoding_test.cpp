// Accept-Encoding negotiation (RFC 9110 12.5.3), for the compression filter
// and the precompressed sidecars.
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <string_view>

#include "http/accept_encoding.hpp"

using portico::config::Coding;
using portico::config::CodingSet;
using portico::http::negotiate_coding;

namespace {

struct EncodingCase {
    std::string_view header;
    bool gzip;
};

struct Choice {
    std::string_view header;
    std::optional<Coding> chosen;  // nullopt: identity
};

CodingSet only(Coding coding) {
    CodingSet set;
    set.add(coding);
    return set;
}

}  // namespace

// The old gzip_static table: gzip offered alone.
TEST_CASE("negotiate_coding: gzip alone, table of Accept-Encoding values", "[compress]") {
    const EncodingCase cases[] = {
        // absent or without gzip
        {"", false},
        {"identity", false},
        {"deflate", false},
        {"br", false},
        {"deflate, br", false},
        {"br;q=1, identity;q=0.5", false},
        // plain gzip, alone or listed
        {"gzip", true},
        {"gzip, deflate, br", true},
        {"deflate, gzip", true},
        {"br,gzip", true},
        {"deflate, br, gzip", true},
        // not a prefix or suffix match
        {"gzipx", false},
        {"xgzip", false},
        {"gzip2", false},
        {"zip", false},
        {"gz", false},
        // q-values
        {"gzip;q=1", true},
        {"gzip;q=1.0", true},
        {"gzip;q=1.000", true},
        {"gzip;q=0.5", true},
        {"gzip;q=0.001", true},
        {"gzip;q=0", false},
        {"gzip;q=0.0", false},
        {"gzip;q=0.00", false},
        {"gzip;q=0.000", false},
        {"gzip; q=0", false},
        {"gzip ;q=0", false},
        {"gzip ; q=0", false},
        {"deflate, gzip;q=0", false},
        {"gzip;q=0, deflate", false},
        {"gzip;q=0.8, deflate;q=1", true},
        // x-gzip is gzip (RFC 9110 8.4.1.3)
        {"x-gzip", true},
        {"deflate, x-gzip", true},
        {"x-gzip;q=0", false},
        // * stands for every coding not listed
        {"*", true},
        {"*;q=0.1", true},
        {"*;q=0", false},
        {"deflate, *;q=0", false},
        {"identity, *;q=0", false},
        // an explicit gzip entry wins over *, in either order
        {"gzip;q=0, *", false},
        {"*, gzip;q=0", false},
        {"*;q=0, gzip", true},
        {"gzip, *;q=0", true},
        // case-insensitive coding names and parameter names
        {"GZIP", true},
        {"Gzip", true},
        {"X-GZIP", true},
        {"deflate, GZip", true},
        {"GZIP;q=0", false},
        {"gzip;Q=0", false},
        {"gzip;Q=0.5", true},
        // whitespace around elements
        {"  gzip  ", true},
        {"deflate ,  gzip", true},
        {"deflate ,  gzip ; q=0.8", true},
        {"\tgzip", true},
        {"deflate,\tgzip", true},
        // empty list elements are ignored (RFC 9110 5.6.1)
        {", gzip", true},
        {"deflate,,gzip", true},
        {",", false},
    };
    for (const EncodingCase& c : cases) {
        INFO("Accept-Encoding: '" << std::string(c.header) << "'");
        CHECK((negotiate_coding(c.header, only(Coding::gzip)) == Coding::gzip) == c.gzip);
    }
}

TEST_CASE("negotiate_coding: q-values first, then br > zstd > gzip", "[compress]") {
    const Choice choices[] = {
        // What browsers send: the server's preference decides.
        {"gzip, deflate, br, zstd", Coding::br},
        {"gzip, deflate, br", Coding::br},
        {"gzip, deflate, zstd", Coding::zstd},
        {"gzip, deflate", Coding::gzip},
        {"zstd, gzip", Coding::zstd},
        // The client's q-values come first.
        {"br;q=0.5, gzip", Coding::gzip},
        {"br;q=0.9, zstd;q=0.95, gzip;q=0.1", Coding::zstd},
        {"gzip;q=0.001, br;q=0.000", Coding::gzip},
        {"br;q=1.000, gzip;q=1", Coding::br},
        // "*" covers what is not listed; a listed q=0 refuses.
        {"*", Coding::br},
        {"*, br;q=0", Coding::zstd},
        {"*, br;q=0, zstd;q=0", Coding::gzip},
        {"*;q=0.5, gzip", Coding::gzip},
        {"*;q=0", std::nullopt},
        {"gzip;q=0", std::nullopt},
        {"gzip;q=0, deflate", std::nullopt},
        {"br;q=0, zstd;q=0, gzip;q=0, *", std::nullopt},
        // identity: refusing it changes nothing we can do better; ranking it
        // above every coding sends the response as it is.
        {"identity;q=0", std::nullopt},
        {"identity;q=0, gzip", Coding::gzip},
        {"*, identity;q=0", Coding::br},
        {"identity, gzip;q=0.5", std::nullopt},
        {"identity;q=0.5, gzip", Coding::gzip},
        {"identity;q=0.5, gzip;q=0.5", Coding::gzip},
        {"br;q=0.5, *;q=0.8", Coding::zstd},
        // Nothing useful.
        {"", std::nullopt},
        {"identity", std::nullopt},
        {"deflate, compress", std::nullopt},
        {",,,", std::nullopt},
        // Malformed q-values: the member counts as not listed.
        {"br;q=2, gzip", Coding::gzip},
        {"br;q=0.0001, gzip", Coding::gzip},
        {"br;q=, gzip", Coding::gzip},
        {"br;q=1.5, gzip", Coding::gzip},
        {"br;q=abc", std::nullopt},
        {"br;q=abc, *", Coding::br},
        // Other parameters are no weight.
        {"br;level=9", Coding::br},
        {"br;level=9;q=0", std::nullopt},
        // Case and whitespace.
        {"BR", Coding::br},
        {"ZSTD ; Q=0.9 , Gzip;q=0.8", Coding::zstd},
        {"x-gzip, gzip;q=0", Coding::gzip},  // the kinder entry of the two
    };
    for (const Choice& c : choices) {
        INFO("Accept-Encoding: '" << std::string(c.header) << "'");
        CHECK(negotiate_coding(c.header, CodingSet::all()) == c.chosen);
    }
}

TEST_CASE("negotiate_coding: only what is offered is chosen", "[compress]") {
    // The sidecars a location lists, or those found on disk.
    CodingSet gzip_and_zstd = only(Coding::gzip);
    gzip_and_zstd.add(Coding::zstd);
    CHECK(negotiate_coding("br, gzip", gzip_and_zstd) == Coding::gzip);
    CHECK(negotiate_coding("br, zstd, gzip", gzip_and_zstd) == Coding::zstd);
    CHECK(negotiate_coding("br", gzip_and_zstd) == std::nullopt);
    CHECK(negotiate_coding("*", gzip_and_zstd) == Coding::zstd);
    CHECK(negotiate_coding("br, gzip", CodingSet{}) == std::nullopt);
}
