#include <catch2/catch.hpp>

#include <string>

#include "http/header_text.hpp"

using portico::http::copy_lower_case;

namespace {

std::string lowered(std::string_view text) {
    std::string out(text.size(), '?');
    copy_lower_case(out.data(), text);
    return out;
}

}  // namespace

TEST_CASE("copy_lower_case lowers ASCII letters of names of every length, nothing else", "[http]") {
    // Lengths below, at and past a word, and not a multiple of one (the
    // last word overlaps the one before).
    CHECK(lowered("") == "");
    CHECK(lowered("ETag") == "etag");
    CHECK(lowered("Server") == "server");
    CHECK(lowered("Content-") == "content-");
    CHECK(lowered("Content-Type") == "content-type");
    CHECK(lowered("Last-Modified") == "last-modified");
    CHECK(lowered("X-Content-Type-Options") == "x-content-type-options");
    // The letters' neighbours stay: '@' before 'A', '[' after 'Z', '`' and
    // '{' around the lower case, digits, and bytes over 0x7f (0xC1 is 'A'
    // with its top bit set).
    CHECK(lowered("@AZ[`az{09-_") == "@az[`az{09-_");
    CHECK(lowered("\xC1\xDA\xC1\xDA\xC1\xDA\xC1\xDA" "AZ") == "\xC1\xDA\xC1\xDA\xC1\xDA\xC1\xDA" "az");
}

TEST_CASE("copy_lower_case agrees with a byte-by-byte lowering on every byte value", "[http]") {
    std::string all;
    for (int byte = 0; byte < 256; ++byte) all.push_back(static_cast<char>(byte));
    std::string expected = all;
    for (char& c : expected)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
    for (size_t start = 0; start < 16; ++start)
        for (size_t length : {1u, 7u, 8u, 9u, 15u, 16u, 17u, 200u}) {
            std::string_view piece = std::string_view(all).substr(start + 40, length);
            CHECK(lowered(piece) == expected.substr(start + 40, length));
        }
    CHECK(lowered(all) == expected);
}
