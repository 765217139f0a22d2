// portico convert: proxy_cache_path and proxy_cache*, written to the keys
// of the spec's "Response cache" ([cache.NAME], a location's `cache`), and
// what it refuses of them.
#include <catch2/catch.hpp>

#include "convert_support.hpp"

using namespace portico::test::convert_support;

namespace convert_cache_test {

namespace {

// The loader's errors but its "unknown key 'cache'": the loader of
// [cache.NAME] and `cache` comes with the cache itself (branch `cache`);
// once merged, none of these errors is left and this is config_errors.
// A server proxying / to an app, with `directives` in that location and
// `http` before the server.
Result convert_cached(const Folder& folder, const std::string& http,
                      const std::string& directives) {
    return convert_http(
        folder,
        http + "server {\n listen 8080;\n location / {\n  proxy_pass http://127.0.0.1:3000;\n" +
            directives + " }\n}\n");
}

const std::string pages_zone = "proxy_cache_path cache keys_zone=pages:10m;\n";

}  // namespace

TEST_CASE("convert: proxy_cache_path is a [cache.NAME] zone", "[convert][cache]") {
    Folder folder;
    Result result =
        convert_cached(folder,
                       "proxy_cache_path cache levels=1:2 keys_zone=pages:10m max_size=1g "
                       "inactive=60m use_temp_path=off;\n",
                       "  proxy_cache pages;\n");
    INFO(result.toml);
    CHECK(result.refusals.empty());
    CHECK(result.config_errors.empty());
    // memory: 8 x keys_zone, with the reason beside it; path absolute.
    CHECK(result.has("[cache.pages]\nmemory = \"80MiB\"\npath = \"" + folder.path() +
                     "/cache\"\nmax_size = \"1GiB\"\n"));
    CHECK(result.has("# memory: 8 x keys_zone's size (nginx's zone holds keys only"));
    CHECK(result.has("# levels=1:2: dropped: portico lays out and loads its disk tier itself"));
    CHECK(result.has("# use_temp_path=off: dropped"));
    CHECK(result.has(
        "# inactive=60m: dropped: portico keeps an unused entry until space runs short"));
    CHECK(result.has("cache = { zone = \"pages\" }"));
    // nginx's default key and portico's differ: said.
    CHECK(
        result.has("proxy_cache pages: key: portico's $scheme$host$request_uri (nginx's "
                   "$scheme$proxy_host$request_uri"));
    CHECK(result.has(
        "proxy_cache pages: the app's Cache-Control, Expires and Vary are read as RFC 9111"));
}

TEST_CASE("convert: proxy_cache_path's smallest sizes, defaults and order", "[convert][cache]") {
    Folder folder;
    // The zone after the server that names it, as nginx allows.
    Result result =
        convert_http(folder,
                     "server { listen 8080; location / { proxy_pass http://127.0.0.1:3000; "
                     "proxy_cache tiny; } }\n"
                     "proxy_cache_path tiny keys_zone=tiny:16k max_size=100k;\n");
    INFO(result.toml);
    CHECK(result.refusals.empty());
    CHECK(result.has("[cache.tiny]\nmemory = \"256KiB\"\npath = \"" + folder.path() +
                     "/tiny\"\nmax_size = \"1MiB\"\n"));
    // No inactive=: nginx's 10m default, said.
    CHECK(result.has("# nginx drops entries unused for 10m (inactive)"));
    CHECK(result.has("cache = { zone = \"tiny\" }"));
}

TEST_CASE("convert: proxy_cache_path refusals", "[convert][cache]") {
    Folder folder;
    Result result =
        convert_http(folder,
                     "proxy_cache_path a;\n"                              // 3
                     "proxy_cache_path keys_zone=b:1m;\n"                 // 4
                     "proxy_cache_path c keys_zone=c:lots;\n"             // 5
                     "proxy_cache_path d keys_zone=d:1m purger=on;\n"     // 6
                     "proxy_cache_path e keys_zone=e:1m max_size=big;\n"  // 7
                     "proxy_cache_path f keys_zone=f:1m;\n"               // 8
                     "proxy_cache_path g keys_zone=f:2m;\n"               // 9
                     "proxy_cache_path h keys_zone=:1m;\n"                // 10
                     "server { listen 8080; location / { proxy_pass http://127.0.0.1:3000; "
                     "proxy_cache d; } }\n");  // 11
    INFO(result.toml);
    CHECK(
        result.refusals ==
        std::vector<std::string>{
            "nginx.conf:3: proxy_cache_path a: expects a path and keys_zone=NAME:SIZE",
            "nginx.conf:4: proxy_cache_path keys_zone=b:1m: expects a path and keys_zone=NAME:SIZE",
            "nginx.conf:5: proxy_cache_path c keys_zone=c:lots: expects a path and "
            "keys_zone=NAME:SIZE",
            "nginx.conf:6: proxy_cache_path d keys_zone=d:1m purger=on: portico's cache has no "
            "purger",
            "nginx.conf:7: proxy_cache_path e keys_zone=e:1m max_size=big: max_size= takes a size",
            "nginx.conf:9: proxy_cache_path g keys_zone=f:2m: a second keys_zone f",
            "nginx.conf:10: proxy_cache_path h keys_zone=:1m: expects a path and "
            "keys_zone=NAME:SIZE",
            // Its zone was refused: so is the location's use of it.
            "nginx.conf:11: proxy_cache d: no proxy_cache_path with keys_zone=d",
        });
    CHECK(result.has("[cache.f]\nmemory = \"8MiB\"\npath = \"" + folder.path() + "/f\"\n"));
    CHECK_FALSE(result.has("[cache.d]"));
    CHECK_FALSE(result.has("cache = "));
}

TEST_CASE("convert: proxy_cache_valid, nginx's default codes and any", "[convert][cache]") {
    Folder folder;
    Result result = convert_cached(folder, pages_zone,
                                   "  proxy_cache pages;\n  proxy_cache_valid 10m;\n"
                                   "  proxy_cache_valid 404 410 1m;\n  proxy_cache_valid 200 1h;\n"
                                   "  proxy_cache_valid any 30s;\n");
    INFO(result.toml);
    CHECK(result.refusals.empty());
    CHECK(result.config_errors.empty());
    // nginx's first entry for a status wins: 200's second line is dead, as there.
    CHECK(
        result.has("cache = { zone = \"pages\", valid = { 200 = \"10m\", 301 = \"10m\", 302 = "
                   "\"10m\", 404 = \"1m\", 410 = \"1m\", any = \"30s\" } }"));

    // Inherited from the server, replaced by a location's own lines.
    Result inherited =
        convert_http(folder, pages_zone +
                                 "server { listen 8080; proxy_cache pages; "
                                 "proxy_cache_valid 200 5m;\n"
                                 " location / { proxy_pass http://127.0.0.1:3000; }\n"
                                 " location /api/ { proxy_pass http://127.0.0.1:3000; "
                                 "proxy_cache_valid any 90s; }\n"
                                 " location /live/ { proxy_pass http://127.0.0.1:3000; "
                                 "proxy_cache off; }\n}\n");
    INFO(inherited.toml);
    CHECK(inherited.refusals.empty());
    CHECK(inherited.has("cache = { zone = \"pages\", valid = { 200 = \"5m\" } }"));
    CHECK(inherited.has("cache = { zone = \"pages\", valid = { any = \"90s\" } }"));
    CHECK(std::count(inherited.toml.begin(), inherited.toml.end(), '{') ==
          std::count(inherited.toml.begin(), inherited.toml.end(), '}'));
    // /live/ has proxy_cache off: no cache table there.
    size_t live = inherited.toml.find("prefix = \"/live/\"");
    REQUIRE(live != std::string::npos);
    CHECK(inherited.toml.find("cache = ", live) == std::string::npos);
}

TEST_CASE("convert: proxy_cache_valid refusals", "[convert][cache]") {
    Folder folder;
    Result result = convert_cached(folder, pages_zone,
                                   "  proxy_cache pages;\n"         // 8
                                   "  proxy_cache_valid 500 1m;\n"  // 9
                                   "  proxy_cache_valid 206 1m;\n"  // 10
                                   "  proxy_cache_valid 200 0;\n"   // 11
                                   "  proxy_cache_valid 200 500ms;\n"
                                   "  proxy_cache_valid;\n"
                                   "  proxy_cache_valid 301 any 1m;\n"
                                   "  proxy_cache_valid 404 1m;\n");  // 15
    INFO(result.toml);
    CHECK(result.refusals ==
          std::vector<std::string>{
              "nginx.conf:9: proxy_cache_valid 500 1m: portico's cache stores no 500 by valid (it "
              "takes 200, 203, 204, 300, 301, 302, 307, 308, 404, 405, 410, 414, 501 and any)",
              "nginx.conf:10: proxy_cache_valid 206 1m: portico's cache stores no 206 by valid (it "
              "takes 200, 203, 204, 300, 301, 302, 307, 308, 404, 405, 410, 414, 501 and any)",
              "nginx.conf:11: proxy_cache_valid 200 0: portico's valid takes a time of 1s or more, "
              "in "
              "seconds",
              "nginx.conf:12: proxy_cache_valid 200 500ms: portico's valid takes a time of 1s or "
              "more, in seconds",
              "nginx.conf:13: proxy_cache_valid: expects [codes] and a time",
              "nginx.conf:15: proxy_cache_valid 404 1m: never applies in nginx (proxy_cache_valid "
              "301 any 1m comes first and covers it); portico would apply it",
          });
    CHECK(result.has("cache = { zone = \"pages\", valid = { 301 = \"1m\", any = \"1m\" } }"));
}

TEST_CASE("convert: proxy_cache_key, proxy_cache_lock, proxy_cache_lock_timeout",
          "[convert][cache]") {
    Folder folder;
    Result result = convert_cached(folder, pages_zone,
                                   "  proxy_cache pages;\n  proxy_cache_key $host$request_uri;\n"
                                   "  proxy_cache_lock on;\n  proxy_cache_lock_timeout 3s;\n");
    INFO(result.toml);
    CHECK(result.refusals.empty());
    CHECK(result.config_errors.empty());
    CHECK(
        result.has("cache = { zone = \"pages\", key = \"$host$request_uri\", lock = true, "
                   "lock_timeout = \"3s\" }"));
    CHECK_FALSE(result.has("key: portico's"));

    // A lock_timeout without the lock does nothing in nginx: not written.
    Result unlocked = convert_cached(folder, pages_zone,
                                     "  proxy_cache pages;\n  proxy_cache_lock off;\n"
                                     "  proxy_cache_lock_timeout 3s;\n");
    CHECK(unlocked.has("cache = { zone = \"pages\" }"));

    Result refused = convert_cached(folder, pages_zone,
                                    "  proxy_cache pages;\n  proxy_cache_key $proxy_host$uri;\n");
    INFO(refused.toml);
    CHECK(refused.refused("proxy_cache_key $proxy_host$uri: '$proxy_host$uri'"));
    CHECK_FALSE(refused.has("cache = "));

    Result zero = convert_cached(
        folder, pages_zone,
        "  proxy_cache pages;\n  proxy_cache_lock on;\n  proxy_cache_lock_timeout 0;\n");
    CHECK(zero.refusals ==
          std::vector<std::string>{"nginx.conf:10: proxy_cache_lock_timeout 0: expects a time"});
}

TEST_CASE("convert: proxy_cache_use_stale and proxy_cache_background_update", "[convert][cache]") {
    Folder folder;
    Result result = convert_cached(folder, pages_zone,
                                   "  proxy_cache pages;\n"
                                   "  proxy_cache_use_stale error timeout invalid_header updating "
                                   "http_500 http_502 http_503 http_504;\n"
                                   "  proxy_cache_background_update on;\n");
    INFO(result.toml);
    CHECK(result.refusals.empty());
    CHECK(result.config_errors.empty());
    CHECK(
        result.has("cache = { zone = \"pages\", stale_if_error = \"24h\", stale_while_revalidate = "
                   "\"24h\" }"));
    CHECK(result.has("nginx answers stale with no age limit: stale_if_error = 24h\n"));
    CHECK(result.has("updating: stale_while_revalidate = 24h\n"));

    // A subset of the conditions: portico covers the rest too, and says so;
    // updating without background update: the difference said.
    Result subset =
        convert_cached(folder, pages_zone,
                       "  proxy_cache pages;\n  proxy_cache_use_stale error timeout updating;\n");
    INFO(subset.toml);
    CHECK(subset.refusals.empty());
    CHECK(
        subset.has("stale_if_error = 24h; portico's also covers invalid_header, http_500, "
                   "http_502, http_503, http_504"));
    CHECK(subset.has("the request that finds the entry expired gets the stale copy too"));

    Result background = convert_cached(
        folder, pages_zone, "  proxy_cache pages;\n  proxy_cache_background_update on;\n");
    CHECK(
        background.has("proxy_cache_background_update on: dropped: without proxy_cache_use_stale "
                       "updating it does nothing"));
    CHECK(background.has("cache = { zone = \"pages\" }"));

    Result off =
        convert_cached(folder, pages_zone, "  proxy_cache pages;\n  proxy_cache_use_stale off;\n");
    CHECK(off.refusals.empty());
    CHECK(off.has("cache = { zone = \"pages\" }"));

    Result not_found = convert_cached(
        folder, pages_zone, "  proxy_cache pages;\n  proxy_cache_use_stale error http_404;\n");
    CHECK(not_found.refusals ==
          std::vector<std::string>{
              "nginx.conf:9: proxy_cache_use_stale error http_404: portico answers "
              "stale on 500, 502, 503, 504, connection errors and timeouts, not "
              "on http_404"});
    CHECK(not_found.has("cache = { zone = \"pages\" }"));
}

TEST_CASE("convert: add_header ... $upstream_cache_status is the status_header",
          "[convert][cache]") {
    Folder folder;
    Result result = convert_http(
        folder, pages_zone +
                    "server { listen 8080; root www;\n"
                    " add_header X-Cache-Status $upstream_cache_status;\n"
                    " add_header X-Frame-Options DENY;\n"
                    " location / { proxy_pass http://127.0.0.1:3000; proxy_cache pages; }\n"
                    " location /static/ { }\n}\n");
    INFO(result.toml);
    CHECK(result.refusals.empty());
    CHECK(result.config_errors.empty());
    CHECK(result.has("cache = { zone = \"pages\", status_header = \"X-Cache-Status\" }"));
    // Not a header of its own anywhere: nginx sends none where nothing is
    // cached (an empty value), portico's cache sends it where it is.
    CHECK_FALSE(result.has("X-Cache-Status = "));
    CHECK(result.has("headers = { X-Frame-Options = \"DENY\" }"));

    Result twice =
        convert_cached(folder, pages_zone,
                       "  proxy_cache pages;\n  add_header X-Cache $upstream_cache_status;\n"
                       "  add_header X-Cache-Status $upstream_cache_status always;\n");
    CHECK(twice.refusals ==
          std::vector<std::string>{"nginx.conf:10: add_header X-Cache-Status "
                                   "$upstream_cache_status always: portico's cache "
                                   "has one status_header"});
    CHECK(twice.has("status_header = \"X-Cache\""));
}

TEST_CASE("convert: proxy_cache_bypass and proxy_no_cache", "[convert][cache]") {
    Folder folder;
    Result upgrade = convert_cached(folder, pages_zone,
                                    "  proxy_cache pages;\n  proxy_cache_bypass $http_upgrade;\n"
                                    "  proxy_no_cache $http_upgrade;\n");
    INFO(upgrade.toml);
    CHECK(upgrade.refusals.empty());
    CHECK(
        upgrade.has("proxy_cache_bypass $http_upgrade: dropped: portico never caches an upgrade"));
    CHECK(upgrade.has("proxy_no_cache $http_upgrade: dropped: portico never caches an upgrade"));

    Result conditions =
        convert_cached(folder, pages_zone,
                       "  proxy_cache pages;\n  proxy_cache_bypass $cookie_nocache;\n"
                       "  proxy_no_cache $arg_nocache $http_pragma;\n");
    CHECK(conditions.refusals ==
          std::vector<std::string>{"nginx.conf:9: proxy_cache_bypass $cookie_nocache: portico's "
                                   "cache has no bypass conditions",
                                   "nginx.conf:10: proxy_no_cache $arg_nocache $http_pragma: "
                                   "portico's cache has no bypass "
                                   "conditions"});

    // Without a cache, nothing to bypass, whatever the condition.
    Result uncached = convert_cached(folder, "", "  proxy_cache_bypass $cookie_nocache;\n");
    CHECK(uncached.refusals.empty());
    CHECK(uncached.has("proxy_cache_bypass $cookie_nocache: dropped: no proxy_cache here"));
}

TEST_CASE("convert: the proxy_cache_* options portico has no key for", "[convert][cache]") {
    Folder folder;
    Result same =
        convert_cached(folder, pages_zone,
                       "  proxy_cache pages;\n  proxy_cache_methods GET HEAD;\n"
                       "  proxy_cache_min_uses 1;\n  proxy_cache_convert_head on;\n"
                       "  proxy_cache_revalidate on;\n  proxy_ignore_headers X-Accel-Expires;\n");
    INFO(same.toml);
    CHECK(same.refusals.empty());
    CHECK(same.has("proxy_cache_methods GET HEAD: dropped: portico caches GET and HEAD"));
    CHECK(same.has("proxy_cache_revalidate on: dropped"));
    CHECK(same.has(
        "proxy_ignore_headers X-Accel-Expires: dropped: portico reads no X-Accel-* fields"));
    CHECK(same.has("cache = { zone = \"pages\" }"));

    Result other = convert_cached(folder, pages_zone,
                                  "  proxy_cache pages;\n"
                                  "  proxy_cache_methods GET HEAD POST;\n"   // 9
                                  "  proxy_cache_min_uses 3;\n"              // 10
                                  "  proxy_cache_convert_head off;\n"        // 11
                                  "  proxy_ignore_headers Cache-Control;\n"  // 12
                                  "  proxy_cache_lock_age 10s;\n"            // 13
                                  "  proxy_cache_max_range_offset 1m;\n");   // 14
    INFO(other.toml);
    CHECK(other.refusals ==
          std::vector<std::string>{
              "nginx.conf:9: proxy_cache_methods GET HEAD POST: portico caches GET and HEAD only",
              "nginx.conf:10: proxy_cache_min_uses 3: portico stores a response on its first miss",
              "nginx.conf:11: proxy_cache_convert_head off: portico asks the app for a GET on a "
              "HEAD miss",
              "nginx.conf:12: proxy_ignore_headers Cache-Control: portico always reads the app's "
              "caching fields (RFC 9111)",
              "nginx.conf:13: proxy_cache_lock_age 10s: portico's cache has no equivalent",
              "nginx.conf:14: proxy_cache_max_range_offset 1m: portico's cache has no equivalent",
          });
}

TEST_CASE("convert: proxy_cache refusals", "[convert][cache]") {
    Folder folder;
    Result unknown = convert_cached(folder, pages_zone, "  proxy_cache nope;\n");
    CHECK(unknown.refusals ==
          std::vector<std::string>{
              "nginx.conf:8: proxy_cache nope: no proxy_cache_path with keys_zone=nope"});
    CHECK_FALSE(unknown.has("cache = "));

    Result variable = convert_cached(folder, pages_zone, "  proxy_cache $zone;\n");
    CHECK(variable.refusals ==
          std::vector<std::string>{"nginx.conf:8: proxy_cache $zone: portico's cache "
                                   "zone is named, not chosen by variables"});

    // nginx caches only what the named location proxies; portico's cache
    // belongs to a location with proxy.
    Result fallback = convert_http(folder, pages_zone +
                                               "server { listen 8080; root www;\n"
                                               " location / { try_files $uri @app; }\n"
                                               " location @app { proxy_pass http://127.0.0.1:3000; "
                                               "proxy_cache pages; }\n}\n");
    INFO(fallback.toml);
    CHECK(
        fallback.refusals ==
        std::vector<std::string>{"nginx.conf:6: proxy_cache pages: in a named location reached by "
                                 "try_files: portico's cache belongs to a location with proxy"});
    CHECK_FALSE(fallback.has("cache = "));

    // Where nothing is proxied, nginx's proxy_cache does nothing: neither
    // does the conversion.
    Result files =
        convert_http(folder, pages_zone + "server { listen 8080; root www; proxy_cache pages; }\n");
    CHECK(files.refusals.empty());
    CHECK_FALSE(files.has("cache = "));
}

}  // namespace convert_cache_test
