// How a location maps a request path to a file under its root or alias:
// the rules that keep an alias's files inside its folder.
#include <stdlib.h>

#include <filesystem>
#include <optional>
#include <string>

#include <catch2/catch.hpp>

#include "static/location_files.hpp"

using portico::config::LocationConfig;
using portico::config::MatchKind;
using portico::staticfiles::has_hidden_segment;
using portico::staticfiles::LocationFiles;

// Its own namespace: in a unity build the test files share one translation
// unit, and their helpers (Answer, fake_path...) must not meet.
namespace static_location_files_test {

namespace {

struct SiteFolder {
    std::string path;
    SiteFolder() {
        char pattern[] = "/tmp/portico-files-XXXXXX";
        REQUIRE(::mkdtemp(pattern) != nullptr);
        path = pattern;
    }
    ~SiteFolder() {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
    }
};

LocationConfig location(MatchKind match, std::string pattern) {
    LocationConfig config;
    config.match = match;
    config.pattern = std::move(pattern);
    return config;
}

std::string mapped(const LocationFiles& files, std::string_view uri) {
    std::optional<std::string_view> relative = files.relative(uri);
    return relative ? "[" + std::string(*relative) + "]" : "outside";
}

}  // namespace

TEST_CASE("location files: root takes the whole path", "[static][static-rules]") {
    SiteFolder folder;
    LocationConfig config = location(MatchKind::prefix, "/img/");
    config.root = folder.path;
    LocationFiles files(config);
    CHECK(files.root().fd);
    CHECK(mapped(files, "/img/a.png") == "[img/a.png]");
    CHECK(mapped(files, "/") == "[]");
}

TEST_CASE("location files: alias replaces the prefix and never leaves its folder",
          "[static][static-rules]") {
    SiteFolder folder;
    LocationConfig slash = location(MatchKind::prefix, "/_next/static/");
    slash.alias = folder.path;
    LocationFiles with_slash(slash);
    CHECK(mapped(with_slash, "/_next/static/chunks/a.js") == "[chunks/a.js]");
    CHECK(mapped(with_slash, "/_next/static/") == "[]");
    CHECK(mapped(with_slash, "/other/a.js") == "outside");

    LocationConfig bare = location(MatchKind::prefix, "/data");
    bare.alias = folder.path;
    LocationFiles without_slash(bare);
    CHECK(mapped(without_slash, "/data/x.txt") == "[x.txt]");
    CHECK(mapped(without_slash, "/data") == "[]");
    CHECK(mapped(without_slash, "/data/") == "[]");
    CHECK(mapped(without_slash, "/data../secret") == "outside");
    CHECK(mapped(without_slash, "/datax") == "outside");
}

TEST_CASE("location files: an exact location's alias is the file itself",
          "[static][static-rules]") {
    SiteFolder folder;
    LocationConfig config = location(MatchKind::exact, "/favicon.ico");
    config.alias = folder.path + "/icon.ico";
    LocationFiles files(config);
    CHECK(files.root().fd);
    CHECK(files.root().real_path == std::filesystem::canonical(folder.path).string());
    CHECK(mapped(files, "/favicon.ico") == "[icon.ico]");
    CHECK(mapped(files, "/favicon.icox") == "outside");
}

TEST_CASE("location files: hidden segments", "[static][static-rules]") {
    CHECK(has_hidden_segment(".env"));
    CHECK(has_hidden_segment("a/.git/config"));
    CHECK_FALSE(has_hidden_segment("a/b.c/d"));
    CHECK_FALSE(has_hidden_segment(""));
}

}  // namespace static_location_files_test
