#include <catch2/catch.hpp>

#include <string>
#include <string_view>

#include "router/path.hpp"

using portico::router::normalize_path;
using portico::router::PathError;

namespace {

struct PathCase {
    std::string_view raw;
    std::string_view expected;  // the normalized path when error is none
    PathError error = PathError::none;
    bool encoded_slash = false;
};

using namespace std::string_view_literals;

const PathCase cases[] = {
    // Already normal.
    {"/", "/"},
    {"/index.html", "/index.html"},
    {"/a/b/", "/a/b/"},
    // Merged slashes (nginx merge_slashes).
    {"//x", "/x"},
    {"//a///b", "/a/b"},
    {"/a//", "/a/"},
    // Dot segments, RFC 3986 5.2.4.
    {"/a/./b", "/a/b"},
    {"/a/b/../c", "/a/c"},
    {"/a/b/c/../../d", "/a/d"},
    {"/a/../b/../c", "/c"},
    {"/a/..", "/"},
    {"/./", "/"},
    {"/.", "/"},
    // A trailing "." or ".." leaves the trailing slash.
    {"/a/.", "/a/"},
    {"/a/b/..", "/a/"},
    {"/a/b/../", "/a/"},
    // Only whole segments are dot segments.
    {"/.hidden", "/.hidden"},
    {"/a../b", "/a../b"},
    {"/.../x", "/.../x"},
    {"/a/..b", "/a/..b"},
    // Traversal attempts.
    {"/..", "", PathError::climbs_above_root},
    {"/../", "", PathError::climbs_above_root},
    {"/../etc/passwd", "", PathError::climbs_above_root},
    {"/a/../../x", "", PathError::climbs_above_root},
    {"//../x", "", PathError::climbs_above_root},
    {"/%2e%2e/x", "", PathError::climbs_above_root},
    {"/%2E%2E/x", "", PathError::climbs_above_root},
    {"/.%2e/x", "", PathError::climbs_above_root},
    {"/%2e%2e%2f", "", PathError::climbs_above_root, true},
    {"/..%2f", "", PathError::climbs_above_root, true},
    {"/a%2f..%2f..%2fetc", "", PathError::climbs_above_root, true},
    // Decoded dot segments inside the root are resolved like plain ones.
    {"/a/%2e%2e/b", "/b"},
    {"/a/%2e/b", "/a/b"},
    // Decoded once only: a double-encoded dot stays text.
    {"/%252e%252e/x", "/%2e%2e/x"},
    {"/%252e%252e%252f", "/%2e%2e%2f"},
    // Encoded slashes decode and are reported.
    {"/a%2Fb", "/a/b", PathError::none, true},
    {"/a%2fb", "/a/b", PathError::none, true},
    {"/a%2f%2fb", "/a/b", PathError::none, true},
    // Other escapes decode to bytes, UTF-8 included.
    {"/a%20b", "/a b"},
    {"/caf%C3%A9", "/caf\xC3\xA9"},
    {"/%E2%82%AC", "/\xE2\x82\xAC"},
    {"/%41%7e", "/A~"},
    {"/100%25", "/100%"},
    // NUL bytes.
    {"/a%00b", "", PathError::nul_byte},
    {"/a\0b"sv, "", PathError::nul_byte},
    // Bad escapes.
    {"/%zz", "", PathError::bad_percent_escape},
    {"/%4", "", PathError::bad_percent_escape},
    {"/%", "", PathError::bad_percent_escape},
    {"/%4g", "", PathError::bad_percent_escape},
    {"/%g4", "", PathError::bad_percent_escape},
    // Not origin form.
    {"", "", PathError::not_origin_form},
    {"a/b", "", PathError::not_origin_form},
    {"%2Fa", "", PathError::not_origin_form},
    {"*", "", PathError::not_origin_form},
};

}  // namespace

TEST_CASE("normalize_path: table of inputs", "[router][path]") {
    std::string out;
    for (const PathCase& c : cases) {
        INFO("raw: " << std::string(c.raw));
        const auto result = normalize_path(c.raw, out);
        CHECK(result.error == c.error);
        if (c.error == PathError::none) {
            CHECK(out == c.expected);
        } else {
            CHECK(out.empty());
        }
        CHECK(result.had_encoded_slash == c.encoded_slash);
    }
}

TEST_CASE("normalize_path: reuses the output buffer", "[router][path]") {
    std::string out;
    out.reserve(256);
    const char* const before = out.data();
    const size_t capacity = out.capacity();

    normalize_path("/a/b/../c%20d//e/.", out);
    CHECK(out == "/a/c d/e/");
    normalize_path("/x", out);
    CHECK(out == "/x");

    CHECK(out.data() == before);
    CHECK(out.capacity() == capacity);
}
