// alias, expires and try_files in the config: what loads, and every bad
// value reported at its line and column (what `portico -t` prints). The
// folders are real (a temp dir with www/ in it), so only the key under test
// is wrong.
#include <stdlib.h>

#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "config/config.hpp"

using portico::config::LoadResult;
using portico::config::parse_config;
using portico::config::TryFilesConfig;

// Its own namespace: in a unity build the test files share one translation
// unit, and their helpers (Answer, fake_path...) must not meet.
namespace config_static_rules_test {

namespace {

namespace fs = std::filesystem;

struct ConfigFolder {
    std::string path;
    ConfigFolder() {
        char pattern[] = "/tmp/portico-config-XXXXXX";
        REQUIRE(::mkdtemp(pattern) != nullptr);
        path = pattern;
        fs::create_directories(path + "/www/static");
        fs::create_directories(path + "/.next/static");
    }
    ~ConfigFolder() {
        std::error_code ignored;
        fs::remove_all(path, ignored);
    }
    std::string file() const { return path + "/portico.toml"; }
};

// Lines 1-5; the location's keys start on line 6.
constexpr const char* head =
    "[server]\n"
    "listen = [\"127.0.0.1:0\"]\n"
    "[upstream.app]\n"
    "servers = [\"127.0.0.1:3000\"]\n"
    "[[location]]\n";

struct BrokenRule {
    const char* what;
    const char* location;  // from line 6
    const char* at;        // "LINE:COL"
    const char* message;   // a part of the message
};

const BrokenRule broken_rules[] = {
    {"alias with root", "prefix = \"/a/\"\nroot = \"www\"\nalias = \"www\"\n", "8:9",
     "location '/a/': alias: cannot be combined with root"},
    {"alias with a NUL byte", "prefix = \"/a/\"\nalias = \"www\\u0000x\"\n", "7:9",
     "alias: expected a folder path without NUL bytes"},
    {"alias in a regex location", "regex = '\\.js$'\nalias = \"www\"\n", "7:9",
     "alias: applies to prefix and exact locations only"},
    {"alias of a missing folder", "prefix = \"/a/\"\nalias = \"nope\"\n", "7:9",
     "nope' is not a readable directory"},
    {"alias of an exact location naming a directory", "exact = \"/f\"\nalias = \"www\"\n", "7:9",
     "names the file it answers with"},
    {"alias of an exact location in a missing folder", "exact = \"/f\"\nalias = \"nope/f.txt\"\n",
     "7:9", "the folder of"},
    {"expires in years", "prefix = \"/\"\nroot = \"www\"\nexpires = \"1y\"\n", "8:11",
     "location '/': expires: expected a duration in whole seconds such as \"365d\""},
    {"expires in milliseconds", "prefix = \"/\"\nroot = \"www\"\nexpires = \"10ms\"\n", "8:11",
     "expires: expected a duration"},
    {"expires not a string", "prefix = \"/\"\nroot = \"www\"\nexpires = 3600\n", "8:11",
     "expires: expected a string"},
    {"expires with a cache_control max-age",
     "prefix = \"/\"\nroot = \"www\"\ncache_control = \"public, max-age=60\"\nexpires = \"1h\"\n",
     "9:11", "cache_control already sets max-age"},
    {"expires on a location that answers by itself",
     "prefix = \"/\"\nrespond = { status = 200, text = \"ok\" }\nexpires = \"1h\"\n", "8:11",
     "location '/': expires: applies only to a location with root, alias or proxy"},
    {"expires on a proxy location in years", "prefix = \"/\"\nproxy = \"app\"\nexpires = \"1y\"\n",
     "8:11", "location '/': expires: expected a duration in whole seconds"},
    {"try_files empty", "prefix = \"/\"\nroot = \"www\"\ntry_files = []\n", "8:13",
     "try_files: expected a non-empty array"},
    {"try_files not an array", "prefix = \"/\"\nroot = \"www\"\ntry_files = \"$uri\"\n", "8:13",
     "try_files: expected a non-empty array"},
    {"try_files with an unknown variable",
     "prefix = \"/\"\nroot = \"www\"\ntry_files = [\"$uri\", \"$urx.html\", \"/index.html\"]\n",
     "8:23", "try_files[1]: unknown variable '$urx'"},
    {"try_files fallback with an unknown variable",
     "prefix = \"/\"\nroot = \"www\"\ntry_files = [\"$uri\", \"/x$nope\"]\n", "8:25",
     "try_files[1]: unknown variable '$nope'"},
    {"try_files with a status out of range",
     "prefix = \"/\"\nroot = \"www\"\ntry_files = [\"$uri\", \"=99\"]\n", "8:22",
     "try_files[1]: expected \"=CODE\" with a status 100..599"},
    {"try_files with a status that is not a number",
     "prefix = \"/\"\nroot = \"www\"\ntry_files = [\"$uri\", \"=40x\"]\n", "8:22",
     "expected \"=CODE\""},
    {"try_files naming an unknown upstream",
     "prefix = \"/\"\nroot = \"www\"\ntry_files = [\"$uri\", \"@nope\"]\n", "8:22",
     "try_files[1]: names unknown upstream 'nope'"},
    {"try_files naming an inline upstream by its URL",
     "prefix = \"/\"\nroot = \"www\"\ntry_files = [\"$uri\", \"@http://127.0.0.1:1\"]\n", "8:22",
     "names unknown upstream"},
    {"try_files with a status before the last entry",
     "prefix = \"/\"\nroot = \"www\"\ntry_files = [\"=404\", \"/index.html\"]\n", "8:14",
     "try_files[0]: expected a file path starting with '/' or a variable"},
    {"try_files with a relative fallback",
     "prefix = \"/\"\nroot = \"www\"\ntry_files = [\"$uri\", \"index.html\"]\n", "8:22",
     "try_files[1]: expected a URI starting with '/', \"=CODE\" or \"@UPSTREAM\""},
    {"try_files with an entry that is not a string",
     "prefix = \"/\"\nroot = \"www\"\ntry_files = [\"$uri\", 3, \"=404\"]\n", "8:22",
     "try_files[1]: expected a string, got"},
    {"try_files without root or alias", "prefix = \"/\"\ntry_files = [\"$uri\", \"=404\"]\n",
     "7:13", "try_files: needs root or alias"},
    {"try_files with proxy",
     "prefix = \"/\"\nroot = \"www\"\nproxy = \"app\"\ntry_files = [\"$uri\", \"=404\"]\n", "9:13",
     "try_files: cannot be combined with proxy; end try_files with \"@UPSTREAM\" instead"},
};

std::string all_messages(const LoadResult& result) {
    std::string text;
    for (const auto& error : result.errors) text += "\n  " + error.to_string();
    return text;
}

}  // namespace

TEST_CASE("alias, expires and try_files: each bad value is reported at its line and column",
          "[config][static-rules]") {
    ConfigFolder folder;
    for (const BrokenRule& broken : broken_rules) {
        LoadResult result = parse_config(std::string(head) + broken.location, folder.file());
        INFO("case: " << broken.what << "\nerrors:" << all_messages(result));
        CHECK_FALSE(result.config);
        std::string expected_start = folder.file() + ":" + broken.at + ": ";
        bool found = false;
        for (const auto& error : result.errors) {
            std::string text = error.to_string();
            found = found || (text.starts_with(expected_start) &&
                              text.find(broken.message) != std::string::npos);
        }
        CHECK(found);
    }
}

TEST_CASE(
    "alias, expires and try_files load: paths relative to the config folder, durations "
    "in seconds, each kind of fallback",
    "[config][static-rules]") {
    ConfigFolder folder;
    std::string text =
        std::string(head) +
        "prefix = \"/_next/static/\"\n"
        "alias = \".next/static/\"\n"
        "expires = \"365d\"\n"
        "[[location]]\n"
        "exact = \"/favicon.ico\"\n"
        "alias = \"www/static/icon.ico\"\n"
        "expires = \"off\"\n"
        "[[location]]\n"
        "prefix = \"/\"\n"
        "root = \"www\"\n"
        "expires = \"90m\"\n"
        "try_files = [\"$uri\", \"$uri.html\", \"$uri/\", \"/index.html?from=$uri\"]\n"
        "[[location]]\n"
        "prefix = \"/files/\"\n"
        "root = \"www\"\n"
        "try_files = [\"$uri\", \"=410\"]\n"
        "[[location]]\n"
        "prefix = \"/api/\"\n"
        "root = \"www\"\n"
        "try_files = [\"$uri\", \"@app\"]\n"
        "[[location]]\n"
        "prefix = \"/app/\"\n"
        "proxy = \"app\"\n"
        "expires = \"12h\"\n";
    LoadResult result = parse_config(text, folder.file());
    INFO("errors:" << all_messages(result));
    REQUIRE(result.config);
    const auto& locations = result.config->locations;
    REQUIRE(locations.size() == 6);
    CHECK(locations[0].alias == folder.path + "/.next/static");
    CHECK(locations[0].expires == std::chrono::seconds(365 * 86400));
    CHECK_FALSE(locations[0].root);
    CHECK(locations[1].alias == folder.path + "/www/static/icon.ico");
    CHECK_FALSE(locations[1].expires);
    CHECK(locations[2].expires == std::chrono::seconds(90 * 60));
    REQUIRE(locations[2].try_files);
    CHECK(locations[2].try_files->files.size() == 3);
    CHECK(locations[2].try_files->fallback == TryFilesConfig::Fallback::uri);
    CHECK(locations[2].try_files->uri.source == "/index.html?from=$uri");
    REQUIRE(locations[3].try_files);
    CHECK(locations[3].try_files->fallback == TryFilesConfig::Fallback::status);
    CHECK(locations[3].try_files->status == 410);
    REQUIRE(locations[4].try_files);
    CHECK(locations[4].try_files->fallback == TryFilesConfig::Fallback::upstream);
    CHECK(locations[4].try_files->upstream == 0u);
    CHECK_FALSE(locations[4].upstream);
    // On proxied responses too (nginx's expires).
    CHECK(locations[5].expires == std::chrono::seconds(12 * 3600));
}

}  // namespace config_static_rules_test
