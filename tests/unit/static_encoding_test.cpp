// Accept-Encoding for gzip_static (RFC 9110 12.5.3).
#include <catch2/catch.hpp>

#include <string>
#include <string_view>

#include "static/encoding.hpp"

using portico::staticfiles::accepts_gzip;

namespace {

struct Case {
    std::string_view header;
    bool gzip;
};

}  // namespace

TEST_CASE("accepts_gzip: table of Accept-Encoding values", "[static][encoding]") {
    const Case cases[] = {
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
    for (const Case& c : cases) {
        INFO("Accept-Encoding: '" << std::string(c.header) << "'");
        CHECK(accepts_gzip(c.header) == c.gzip);
    }
}
