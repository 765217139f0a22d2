// An upstream's tls = { ... } and proxy = "https://...": what they read into
// (the files are the TLS layer's to load: tests/integration/
// proxy_tls_upstream_test.cpp). Mistakes are in config_errors_test.cpp.
#include <string>

#include <catch2/catch.hpp>

#include "config/config.hpp"

using namespace portico::config;

namespace config_upstream_tls_test {

constexpr const char* fake_path = "/nonexistent-portico-conf/portico.toml";

TEST_CASE("tls on an upstream reads its keys, paths from the config folder", "[config]") {
    LoadResult result = parse_config(R"(
[server]
listen = ["127.0.0.1:0"]
[upstream.api]
servers = ["127.0.0.1:8443"]
tls = { ca = "certs/ca.pem", server_name = "api.internal", cert = "client.pem", key = "/k/client.key" }
[upstream.plain]
servers = ["127.0.0.1:8080"]
[upstream.lax]
servers = ["unix:/run/app.sock"]
tls = { verify = false }
)",
                                     fake_path);
    REQUIRE(result.config);
    const std::vector<UpstreamConfig>& upstreams = result.config->upstreams;
    REQUIRE(upstreams.size() == 3);
    REQUIRE(upstreams[0].tls);
    CHECK(upstreams[0].tls->verify);
    CHECK(upstreams[0].tls->ca == "/nonexistent-portico-conf/certs/ca.pem");
    CHECK(upstreams[0].tls->server_name == "api.internal");
    REQUIRE(upstreams[0].tls->client);
    CHECK(upstreams[0].tls->client->cert == "/nonexistent-portico-conf/client.pem");
    CHECK(upstreams[0].tls->client->key == "/k/client.key");
    CHECK(upstreams[0].tls->where.line == 6);
    CHECK_FALSE(upstreams[1].tls);
    // On a Unix socket too: allowed (docs/configuration.md, "Upstream TLS").
    REQUIRE(upstreams[2].tls);
    CHECK_FALSE(upstreams[2].tls->verify);
    CHECK(upstreams[2].tls->ca.empty());
    CHECK_FALSE(upstreams[2].tls->client);
}

TEST_CASE("proxy = \"https://...\" is an inline upstream with default tls", "[config]") {
    LoadResult result = parse_config(R"(
[server]
listen = ["127.0.0.1:0"]
[[location]]
prefix = "/a/"
proxy = "https://localhost:8443/v1/"
[[location]]
prefix = "/b/"
proxy = "https://127.0.0.1"
[[location]]
prefix = "/c/"
proxy = "http://127.0.0.1"
)",
                                     fake_path);
    REQUIRE(result.config);
    const Config& config = *result.config;
    REQUIRE(config.upstreams.size() == 3);
    CHECK(config.upstreams[0].name == "https://localhost:8443");
    REQUIRE(config.upstreams[0].tls);
    CHECK(config.upstreams[0].tls->verify);
    CHECK(config.upstreams[0].tls->server_name.empty());
    CHECK(config.locations[0].proxy_path == "/v1/");
    // 443 unless given, as in any https URL.
    CHECK(config.upstreams[1].servers[0].text == "127.0.0.1:443");
    REQUIRE(config.upstreams[1].tls);
    CHECK(config.upstreams[2].servers[0].text == "127.0.0.1:80");
    CHECK_FALSE(config.upstreams[2].tls);
}

}  // namespace config_upstream_tls_test
