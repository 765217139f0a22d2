// portico convert: proxy_pass and its headers, timeouts, upstream blocks,
// so that the app receives what nginx sent it.
#include <catch2/catch.hpp>

#include "convert_support.hpp"

using namespace portico::test::convert_support;

namespace convert_proxy_test {

std::string server(const std::string& body) {
    return "server {\n listen 80;\n" + body + "\n}\n";
}

TEST_CASE("convert: proxy_pass to an upstream, a host, a host with a path", "[convert]") {
    Folder folder;
    Result result = convert_http(
        folder, "upstream app { server 127.0.0.1:3000; }\n" +
                    server("location / { proxy_pass http://app; }\n"
                           "location /b/ { proxy_pass http://127.0.0.1:4000; }\n"
                           "location /c/ { proxy_pass http://localhost; }\n"
                           "location /api/ { proxy_pass http://127.0.0.1:4000/v1/; }\n"
                           "location /same/ { proxy_pass http://127.0.0.1:4000/same/; }"));
    INFO(result.toml);
    CHECK(result.refusals.empty());
    CHECK(result.config_errors.empty());
    // nginx sends $proxy_host as Host: portico's preserve_host = false
    // where it sends the same text, a Host header where not.
    CHECK(
        result.has("proxy = \"app\"\npreserve_host = false\nproxy_headers = { X-Forwarded-For = "
                   "\"\", X-Forwarded-Proto = \"\", X-Forwarded-Host = \"\", X-Real-IP = \"\", "
                   "X-Request-ID = \"\" }\nwebsocket = false"));
    CHECK(result.has("proxy = \"http://127.0.0.1:4000\"\npreserve_host = false"));
    CHECK(result.has("proxy = \"http://localhost:80\"\nproxy_headers = { Host = \"localhost\""));
    CHECK(result.has("proxy = \"http://127.0.0.1:4000/v1/\""));
    // A path equal to the prefix changes nothing.
    CHECK(result.has("prefix = \"/same/\"\nproxy = \"http://127.0.0.1:4000\""));
}

TEST_CASE("convert: proxy_set_header, WebSocket lines and X-Forwarded-*", "[convert]") {
    Folder folder;
    Result result = convert_http(folder, server("location / {\n"
                                                "  proxy_pass http://127.0.0.1:3000;\n"
                                                "  proxy_http_version 1.1;\n"
                                                "  proxy_set_header Upgrade $http_upgrade;\n"
                                                "  proxy_set_header Connection \"upgrade\";\n"
                                                "  proxy_set_header Host $host;\n"
                                                "  proxy_set_header X-Real-IP $remote_addr;\n"
                                                "  proxy_set_header X-Forwarded-For "
                                                "$proxy_add_x_forwarded_for;\n"
                                                "  proxy_set_header X-Forwarded-Proto $scheme;\n"
                                                "  proxy_set_header Accept-Encoding \"\";\n"
                                                "  proxy_cache_bypass $http_upgrade;\n"
                                                "  proxy_hide_header X-Powered-By;\n"
                                                "}"));
    INFO(result.toml);
    CHECK(result.refusals.empty());
    CHECK(result.config_errors.empty());
    CHECK(
        result.has("proxy_headers = { Host = \"$host\", X-Real-IP = \"$remote_addr\", "
                   "X-Forwarded-Proto = \"$scheme\", Accept-Encoding = \"\", X-Forwarded-Host "
                   "= \"\", X-Request-ID = \"\" }"));
    CHECK(result.has("hide_headers = [\"X-Powered-By\"]"));
    // All three WebSocket lines: portico's default websocket = true.
    CHECK_FALSE(result.has("websocket = false"));
    CHECK(result.has("proxy_set_header Upgrade $http_upgrade: dropped"));
    CHECK(result.has("proxy_cache_bypass $http_upgrade: dropped"));
    CHECK(result.has("proxy_http_version 1.1: dropped"));
    // Host $http_host: the client's Host as received, portico's default.
    Result client_host = convert_http(folder, server("location / { proxy_pass "
                                                     "http://127.0.0.1:3000; proxy_set_header "
                                                     "Host $http_host; }"));
    CHECK_FALSE(client_host.has("preserve_host"));
    CHECK_FALSE(client_host.has("{ Host = "));
    Result unknown = convert_http(folder, server("location / { proxy_pass http://127.0.0.1:3000; "
                                                 "proxy_set_header X-Id $connection; }"));
    CHECK(unknown.refused("proxy_set_header X-Id $connection"));
}

TEST_CASE("convert: proxy_pass forms portico has no equivalent for", "[convert]") {
    Folder folder;
    auto [directive, location] = GENERATE(table<std::string, std::string>({
        {"proxy_pass http://$backend", "/"},
        {"proxy_pass https://127.0.0.1:3000", "/"},
        {"proxy_pass http://127.0.0.1:3000/x/", "~ ^/r"},
        {"proxy_pass http://pool/v1/", "/api/"},
    }));
    INFO(directive);
    Result result = convert_http(folder,
                                 "upstream pool { server 127.0.0.1:1; server "
                                 "127.0.0.1:2; }\n" +
                                     server("location " + location + " { " + directive + "; }"));
    CHECK(result.refused(directive));
    CHECK(result.config_errors.empty());
}

TEST_CASE("convert: an upstream of one server with a path goes inline", "[convert]") {
    Folder folder;
    Result result = convert_http(folder, "upstream one { server 127.0.0.1:3000; keepalive 8; }\n" +
                                             server("location /api/ { proxy_pass http://one/; "
                                                    "proxy_set_header Host $host; }"));
    INFO(result.toml);
    CHECK(result.refusals.empty());
    CHECK(result.has("proxy = \"http://127.0.0.1:3000/\""));
    CHECK(result.has("the upstream's one server inline"));
}

TEST_CASE("convert: unix sockets", "[convert]") {
    Folder folder;
    Result result = convert_http(folder, "upstream app { server unix:run/app.sock; }\n" +
                                             server("location / { proxy_pass http://app; }\n"
                                                    "location /b/ { proxy_pass "
                                                    "http://unix:/run/b.sock:; }"));
    INFO(result.toml);
    CHECK(result.refusals.empty());
    CHECK(result.has("servers = [\"unix:" + folder.path() + "/run/app.sock\"]"));
    CHECK(result.has("[upstream.unix__run_b_sock]\nservers = [\"unix:/run/b.sock\"]"));
    // nginx sends Host: localhost to a unix: proxy_pass, as portico does.
    CHECK(result.has("proxy = \"unix__run_b_sock\"\nproxy_headers = { Host = \"localhost\""));
}

TEST_CASE("convert: proxy timeouts belong to the upstream", "[convert]") {
    Folder folder;
    Result result = convert_http(folder, "upstream app { server 127.0.0.1:3000; }\n" +
                                             server("proxy_connect_timeout 5s;\n"
                                                    "location / { proxy_pass http://app; "
                                                    "proxy_read_timeout 1h; }\n"
                                                    "location /ws/ { proxy_pass http://app; "
                                                    "proxy_read_timeout 2h; }\n"
                                                    "location /h/ { proxy_pass "
                                                    "http://127.0.0.1:4000; proxy_send_timeout "
                                                    "30s; }\n"
                                                    "location /p/ { proxy_pass "
                                                    "http://127.0.0.1:4000/q/; proxy_send_timeout "
                                                    "30s; }"));
    INFO(result.toml);
    CHECK(result.config_errors.empty());
    CHECK(
        result.has("[upstream.app]\nservers = [\"127.0.0.1:3000\"]\nconnect_timeout = \"5s\"\n"
                   "read_timeout = \"3600s\""));
    CHECK(result.refused("proxy_read_timeout 2h"));
    // A host without a path: an upstream of its own carries the timeout.
    CHECK(
        result.has("[upstream.127_0_0_1_4000]\nservers = [\"127.0.0.1:4000\"]\n"
                   "connect_timeout = \"5s\"\nsend_timeout = \"30s\""));
    CHECK(result.refused("proxy_send_timeout 30s"));
}

TEST_CASE("convert: upstream blocks", "[convert]") {
    Folder folder;
    Result result =
        convert_http(folder,
                     "upstream a {\n"
                     "  least_conn;\n"
                     "  server 10.0.0.1:3000 max_fails=3 fail_timeout=30s max_conns=64;\n"
                     "  server 10.0.0.2:3000 max_fails=3 fail_timeout=30s max_conns=64;\n"
                     "  keepalive 16;\n"
                     "  keepalive_timeout 30s;\n"
                     "}\n"
                     "upstream b { ip_hash; server app1; server app2:3000; }\n" +
                         server("location /a/ { proxy_pass http://a; }\n"
                                "location /b/ { proxy_pass http://b; }"));
    INFO(result.toml);
    CHECK(result.refusals.empty());
    CHECK(
        result.has("[upstream.a]\nservers = [\"10.0.0.1:3000\", \"10.0.0.2:3000\"]\n"
                   "balance = \"least_conn\"\nmax_fails = 3\nfail_timeout = \"30s\"\n"
                   "max_connections = 64\nkeepalive = 16\nidle_timeout = \"30s\""));
    CHECK(
        result.has("[upstream.b]\nservers = [\"app1:80\", \"app2:3000\"]\nbalance = \"ip_hash\""));
    CHECK(result.has("nginx opened a new connection per request here"));

    Result differing = convert_http(folder,
                                    "upstream a { server 10.0.0.1:1 max_fails=2; "
                                    "server 10.0.0.2:1; }\n" +
                                        server(""));
    CHECK(differing.refused("server 10.0.0.2:1"));
    Result weights = convert_http(folder,
                                  "upstream a { server 10.0.0.1:1 weight=3; server "
                                  "10.0.0.2:1 backup; hash $request_uri; }\n" +
                                      server(""));
    CHECK(weights.refused("server 10.0.0.1:1 weight=3"));
    CHECK(weights.refused("server 10.0.0.2:1 backup"));
    CHECK(weights.refused("hash $request_uri"));
}

}  // namespace convert_proxy_test
