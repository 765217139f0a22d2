// [cache.NAME] and a location's `cache`: each broken value is a `portico -t`
// error at its line and column, and a good config loads.
#include <catch2/catch.hpp>

#include "broken_configs.hpp"
#include "config/config.hpp"

using portico::config::parse_config;
using portico::test::BrokenConfig;

namespace config_cache_test {

namespace {

constexpr const char* fake_path = "/nonexistent-portico-conf/portico.toml";

// Lines 1-2 [server], line 4 [cache.pages], its keys from line 5; the
// location's cache is on the line after `proxy`.
#define CACHE(zone, location)                                      \
    "[server]\nlisten = [\"127.0.0.1:0\"]\n\n[cache.pages]\n" zone \
    "\n[[location]]\nprefix = \"/\"\nproxy = \"http://127.0.0.1:9\"\n" location

const BrokenConfig broken_caches[] = {
    {"a zone without memory", CACHE("", "cache = { zone = \"pages\" }\n"), "4:1",
     "cache.pages.memory: missing"},
    {"a bad memory size", CACHE("memory = \"lots\"\n", ""), "5:10",
     "cache.pages.memory: expected a size"},
    {"a memory too small", CACHE("memory = \"1KiB\"\n", ""), "5:10",
     "cache.pages.memory: expected a size from"},
    {"max_size without path", CACHE("memory = \"1MiB\"\nmax_size = \"1GiB\"\n", ""), "6:12",
     "max_size: applies only with a path"},
    {"a path that cannot be created",
     CACHE("memory = \"1MiB\"\npath = \"/proc/portico-cache\"\n", ""), "6:8",
     "cache.pages.path: cannot be created or written"},
    {"an unknown key in the zone", CACHE("memory = \"1MiB\"\nmemroy = 1\n", ""), "6:1",
     "unknown key 'memroy' in [cache.pages]"},
    {"an unknown zone", CACHE("memory = \"1MiB\"\n", "cache = { zone = \"other\" }\n"), "10:18",
     "cache.zone: \"other\" is not a [cache.NAME] table"},
    {"no zone", CACHE("memory = \"1MiB\"\n", "cache = { lock = true }\n"), "10:9",
     "cache.zone: missing"},
    {"a key with an unknown variable",
     CACHE("memory = \"1MiB\"\n", "cache = { zone = \"pages\", key = \"$host$nope\" }\n"), "10:39",
     "unknown variable '$nope'"},
    {"valid for a status that cannot be stored",
     CACHE("memory = \"1MiB\"\n", "cache = { zone = \"pages\", valid = { 500 = \"1m\" } }\n"),
     "10:37", "valid: \"500\" is not a status the cache can store"},
    {"valid for 206",
     CACHE("memory = \"1MiB\"\n", "cache = { zone = \"pages\", valid = { 206 = \"1m\" } }\n"),
     "10:37", "is not a status the cache can store"},
    {"valid with a bad duration",
     CACHE("memory = \"1MiB\"\n", "cache = { zone = \"pages\", valid = { 200 = \"soon\" } }\n"),
     "10:43", "valid.200: expected a duration of at least 1s"},
    {"a bad lock_timeout",
     CACHE("memory = \"1MiB\"\n", "cache = { zone = \"pages\", lock_timeout = \"5 parsecs\" }\n"),
     "10:42", "cache.lock_timeout: expected a duration"},
    {"a bad stale_if_error",
     CACHE("memory = \"1MiB\"\n", "cache = { zone = \"pages\", stale_if_error = 5 }\n"), "10:44",
     "cache.stale_if_error: expected a duration"},
    {"a bad status_header",
     CACHE("memory = \"1MiB\"\n", "cache = { zone = \"pages\", status_header = \"X Cache\" }\n"),
     "10:43", "cache.status_header: expected a header name"},
    {"an unknown key in cache",
     CACHE("memory = \"1MiB\"\n", "cache = { zone = \"pages\", locked = true }\n"), "10:27",
     "unknown key 'locked'"},
    {"cache without proxy",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n\n[cache.pages]\nmemory = \"1MiB\"\n\n"
     "[[location]]\nprefix = \"/\"\nroot = \"/\"\ncache = { zone = \"pages\" }\n",
     "10:9", "cache applies only to a location with proxy"},
};

}  // namespace

TEST_CASE("cache config: each broken zone or location cache is reported at its place",
          "[config][cache]") {
    portico::test::check_broken_configs(broken_caches, fake_path);
}

TEST_CASE("cache config: a good config loads, with nginx's defaults", "[config][cache]") {
    auto result = parse_config(
        CACHE("memory = \"2MiB\"\n",
              "cache = { zone = \"pages\", valid = { 200 = \"10m\", any = \"1s\" }, lock = true, "
              "stale_while_revalidate = \"10s\", stale_if_error = \"1h\", status_header = "
              "\"X-Cache-Status\" }\n"
              "[[location]]\nprefix = \"/b/\"\nproxy = \"http://127.0.0.1:9\"\n"
              "cache = { zone = \"pages\", key = \"$host$uri$cookie_lang\" }\n"),
        fake_path);
    INFO(portico::test::all_messages(result));
    REQUIRE(result.config);
    REQUIRE(result.config->caches.size() == 1);
    CHECK(result.config->caches[0].name == "pages");
    CHECK(result.config->caches[0].memory == 2u << 20);
    const auto& first = result.config->locations.at(0);
    REQUIRE(first.cache);
    CHECK(first.cache->zone == 0);
    CHECK(first.cache->key.source == "$scheme$host$request_uri");
    CHECK(first.cache->valid == std::vector<std::pair<int, std::chrono::seconds>>{
                                    {200, std::chrono::minutes(10)}, {0, std::chrono::seconds(1)}});
    CHECK(first.cache->lock);
    CHECK(first.cache->lock_timeout == std::chrono::seconds(5));
    CHECK(first.cache->stale_while_revalidate == std::chrono::seconds(10));
    CHECK(first.cache->stale_if_error == std::chrono::hours(1));
    CHECK(first.cache->status_header == "X-Cache-Status");
    const auto& second = result.config->locations.at(1);
    REQUIRE(second.cache);
    CHECK(second.cache->key.source == "$host$uri$cookie_lang");
    CHECK_FALSE(second.cache->lock);
    CHECK(second.cache->status_header.empty());
}

#undef CACHE

}  // namespace config_cache_test
