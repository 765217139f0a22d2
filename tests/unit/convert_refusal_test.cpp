// portico convert: what it refuses (FILE:LINE: directive: why) and what it
// drops with a note, and the command's exit status.
#include <catch2/catch.hpp>

#include "cli/convert_command.hpp"
#include "convert_support.hpp"

using namespace portico::test::convert_support;

namespace convert_refusal_test {

TEST_CASE("convert: directives with no exact equivalent are refused, the rest written",
          "[convert]") {
    Folder folder;
    Result result = convert_http(folder,
                                 "map $http_upgrade $connection_upgrade { default upgrade; }\n"
                                 "geo $blocked { default 0; }\n"
                                 "proxy_cache_path /tmp/c keys_zone=c:10m purger=on;\n"
                                 "server {\n"
                                 "  root www;\n"
                                 "  if ($http_user_agent ~ bot) { return 403; }\n"
                                 "  location / {\n"
                                 "    sub_filter a b;\n"
                                 "    content_by_lua_block { ngx.say('x') }\n"
                                 "    limit_rate 10k;\n"
                                 "    frobnicate on;\n"
                                 "    set $x 1;\n"
                                 "    if ($x) { return 404; }\n"
                                 "  }\n"
                                 "}\n");
    INFO(result.toml);
    CHECK(result.config_errors.empty());
    CHECK(result.refusals ==
          std::vector<std::string>{
              "nginx.conf:3: map $http_upgrade $connection_upgrade: portico has no map: write the "
              "cases as locations or sites",
              "nginx.conf:4: geo $blocked: portico has no geo: use allow/deny",
              "nginx.conf:5: proxy_cache_path /tmp/c keys_zone=c:10m purger=on: portico's cache "
              "has no purger",
              "nginx.conf:8: if ($http_user_agent ~ bot): portico has no if; only `if ($scheme = "
              "http)` and `if ($host = NAME)` around one return translate",
              "nginx.conf:10: sub_filter a b: portico does not edit response bodies",
              "nginx.conf:11: content_by_lua_block: portico does not embed Lua",
              "nginx.conf:12: limit_rate 10k: portico does not throttle responses",
              "nginx.conf:13: frobnicate on: unknown or unsupported in a location",
              "nginx.conf:14: set $x 1: portico has no user variables",
              "nginx.conf:15: if ($x): portico has no if inside a location",
          });
    // The rest is still written.
    CHECK(result.has("prefix = \"/\"\nroot = \"" + folder.path() + "/www\""));
}

TEST_CASE("convert: what portico does by itself is dropped with a note, not refused", "[convert]") {
    Folder folder;
    Result result = convert_http(folder,
                                 "sendfile on;\ntcp_nopush on;\ntypes_hash_max_size 2048;\n"
                                 "server_tokens off;\nclient_body_temp_path /tmp/b;\n"
                                 "proxy_buffering off;\nssl_session_timeout 1d;\n"
                                 "server { root www; }");
    INFO(result.toml);
    CHECK(result.refusals.empty());
    CHECK(result.config_errors.empty());
    for (const char* line : {"nginx.conf:3: sendfile on: dropped", "nginx.conf:4: tcp_nopush on",
                             "nginx.conf:6: server_tokens off: dropped",
                             "nginx.conf:8: proxy_buffering off: dropped"}) {
        INFO(line);
        CHECK(result.has(line));
    }
}

TEST_CASE("convert: types blocks become [mime]", "[convert]") {
    Folder folder;
    Result result = convert_http(folder,
                                 "types { text/html html htm; application/wasm wasm; "
                                 "text/plain html; }\nserver { root www; }");
    CHECK(
        result.has("[mime]\nhtml = \"text/html\"\nhtm = \"text/html\"\nwasm = "
                   "\"application/wasm\"\n\n"));
    CHECK(result.config_errors.empty());
}

int run(const std::vector<std::string>& args) {
    std::vector<std::string> copy = args;
    std::vector<char*> argv;
    for (std::string& arg : copy) argv.push_back(arg.data());
    return portico::cli::run_convert_command(static_cast<int>(argv.size()), argv.data());
}

TEST_CASE("convert command: exit status 0, 2 with refusals, 1 when nothing is written",
          "[convert]") {
    Folder folder;
    folder.write("clean.conf", "events {}\nhttp { server { root www; } }\n");
    folder.write("refused.conf",
                 "events {}\nhttp { server { root www; if ($a) { return 1; } } }\n");
    folder.write("broken.conf", "http { server {\n");
    folder.write("empty.conf", "events {}\n");
    folder.write("conf/inc.conf", "server { root ../www; }\n");
    folder.write("inc.conf", "server { root www; }\n");
    folder.write("conf/main.conf", "http { include inc.conf; }\n");
    std::string base = folder.path() + "/";
    CHECK(run({"convert", base + "clean.conf"}) == 0);
    CHECK(run({"convert", base + "refused.conf"}) == 2);
    CHECK(run({"convert", base + "broken.conf"}) == 1);
    CHECK(run({"convert", base + "empty.conf"}) == 1);
    CHECK(run({"convert", base + "missing.conf"}) == 1);
    CHECK(run({"convert"}) == 1);
    CHECK(run({"convert", "--bogus", base + "clean.conf"}) == 1);
    // Includes resolve against the file's folder, or --prefix.
    CHECK(run({"convert", base + "conf/main.conf"}) == 0);
    CHECK(run({"convert", "--prefix", folder.path(), base + "conf/main.conf"}) == 0);
    CHECK(run({"convert", "--prefix", folder.path() + "/www", base + "conf/main.conf"}) == 1);
}

}  // namespace convert_refusal_test
