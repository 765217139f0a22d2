// [[site]] on the real binary: which site answers a Host (exact, wildcard,
// regex, the default; case, port and trailing dot ignored; no Host at all),
// over HTTP/1.1 and h2c, each site with its own locations, and sites that
// answer only on some listeners.
#include <catch2/catch.hpp>

#include "harness.hpp"
#include "http2_support.hpp"
#include "proxy_support.hpp"

using namespace portico::test;

// Its own namespace: in a unity build the test files share one translation
// unit, and their helpers (Answer, fake_path...) must not meet.
namespace sites_test {

namespace {

// Each site's "/" answers with its letter; only b has /only-b.
const std::string sites_config = R"(
[server]
listen = ["{listen}"]
workers = 1

[http2]
cleartext = true

[[site]]
names = ["a.test", "www.a.test"]
  [[site.location]]
  prefix = "/"
  respond = { status = 200, body = "a" }

[[site]]
names = ["b.test"]
default = true
  [[site.location]]
  prefix = "/"
  respond = { status = 200, body = "b" }
  [[site.location]]
  exact = "/only-b"
  respond = { status = 200, body = "only b" }

[[site]]
names = ["*.w.test", "*.deep.w.test"]
  [[site.location]]
  prefix = "/"
  respond = { status = 200, body = "w" }

[[site]]
names = ["*.deep.w.test.other", "~^(?<sub>[a-z]+)\\.r\\.test$", "~^(?P<x>.+)\\.deep\\.w\\.test$"]
  [[site.location]]
  prefix = "/"
  respond = { status = 200, body = "r" }
)";

// The body that answered `host` over HTTP/1.1 ("" without a response).
std::string site_of(uint16_t port, const std::string& host, const std::string& path = "/") {
    Client client(port);
    client.send("GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\n\r\n");
    std::optional<Response> response = client.read_response();
    return response ? std::to_string(response->status) + " " + response->body : "";
}

// The same over h2c, with `host` as :authority.
std::string h2_site_of(h2::Client& client, const std::string& host, const std::string& path = "/") {
    uint32_t stream = client.get(path, {}, "GET", host);
    if (!client.wait_stream(stream)) return "";
    const h2::StreamResult& result = client.result(stream);
    return std::to_string(result.status) + " " + result.body;
}

}  // namespace

TEST_CASE("sites: the Host chooses the site: exact, longest wildcard, regex, then the default",
          "[sites]") {
    Portico portico(sites_config);
    const uint16_t port = portico.port();
    CHECK(site_of(port, "a.test") == "200 a");
    CHECK(site_of(port, "www.a.test") == "200 a");
    CHECK(site_of(port, "b.test") == "200 b");
    CHECK(site_of(port, "x.w.test") == "200 w");
    CHECK(site_of(port, "x.y.w.test") == "200 w");  // a leading wildcard covers several labels
    // The wildcard beats a regex that matches too.
    CHECK(site_of(port, "x.deep.w.test") == "200 w");
    CHECK(site_of(port, "abc.r.test") == "200 r");
    CHECK(site_of(port, "unknown.test") == "200 b");  // the marked default, not the first site
    CHECK(site_of(port, "w.test") == "200 b");        // "*.w.test" needs a label before
    // Each site has its own locations.
    CHECK(site_of(port, "b.test", "/only-b") == "200 only b");
    CHECK(site_of(port, "a.test", "/only-b") == "200 a");
}

TEST_CASE("sites: Host is matched without case, port or trailing dot", "[sites]") {
    Portico portico(sites_config);
    const uint16_t port = portico.port();
    CHECK(site_of(port, "A.TEST") == "200 a");
    CHECK(site_of(port, "a.test:8080") == "200 a");
    CHECK(site_of(port, "a.test.") == "200 a");
    CHECK(site_of(port, "WWW.A.Test.:1") == "200 a");
    CHECK(site_of(port, "X.W.TEST") == "200 w");
    CHECK(site_of(port, "ABC.R.TEST:80") == "200 r");
}

TEST_CASE("sites: a request without Host goes to the default site", "[sites]") {
    Portico portico(sites_config);
    Client client(portico.port());
    client.send("GET /only-b HTTP/1.0\r\n\r\n");
    std::optional<Response> response = client.read_response();
    REQUIRE(response);
    CHECK(response->status == 200);
    CHECK(response->body == "only b");
    // An absolute-form target names the host itself.
    Client absolute(portico.port());
    absolute.send("GET http://a.test/ HTTP/1.1\r\nHost: b.test\r\nConnection: close\r\n\r\n");
    response = absolute.read_response();
    REQUIRE(response);
    CHECK(response->body == "a");
}

TEST_CASE("sites: one keep-alive connection reaches each site its requests name", "[sites]") {
    Portico portico(sites_config);
    Client client(portico.port());
    const std::pair<const char*, const char*> requests[] = {
        {"a.test", "a"}, {"b.test", "b"}, {"q.w.test", "w"}, {"a.test", "a"}};
    for (const auto& [host, site] : requests) {
        client.send(std::string("GET / HTTP/1.1\r\nHost: ") + host + "\r\n\r\n");
        std::optional<Response> response = client.read_response();
        REQUIRE(response);
        CHECK(response->body == site);
    }
}

TEST_CASE("sites: h2c chooses by :authority (or Host), one site per stream", "[sites][http2]") {
    Portico portico(sites_config);
    h2::Client client(portico.port());
    CHECK(h2_site_of(client, "a.test") == "200 a");
    CHECK(h2_site_of(client, "A.Test.:443") == "200 a");
    CHECK(h2_site_of(client, "x.w.test") == "200 w");
    CHECK(h2_site_of(client, "abc.r.test") == "200 r");
    CHECK(h2_site_of(client, "unknown.test") == "200 b");
    CHECK(h2_site_of(client, "b.test", "/only-b") == "200 only b");
    CHECK(h2_site_of(client, "a.test", "/only-b") == "200 a");
    // Without :authority, the Host header names the site.
    uint32_t stream = client.request(
        {{":method", "GET"}, {":scheme", "http"}, {":path", "/"}, {"host", "www.a.test"}});
    REQUIRE(client.wait_stream(stream));
    CHECK(client.result(stream).body == "a");
}

TEST_CASE("sites: a site with listen answers only there, and each listener has its default",
          "[sites]") {
    const uint16_t second = unused_port();
    const std::string second_listen = "127.0.0.1:" + std::to_string(second);
    Portico portico(R"(
[server]
listen = ["{listen}", ")" +
                    second_listen + R"("]
workers = 1

[[site]]
names = ["x.test"]
listen = [")" + second_listen +
                    R"("]
default = true
  [[site.location]]
  prefix = "/"
  respond = { status = 200, body = "x" }

[[site]]
names = ["y.test"]
  [[site.location]]
  prefix = "/"
  respond = { status = 200, body = "y" }
)");
    // The first listener: x.test does not answer there, y.test is its default.
    CHECK(site_of(portico.port(), "x.test") == "200 y");
    CHECK(site_of(portico.port(), "y.test") == "200 y");
    CHECK(site_of(portico.port(), "other.test") == "200 y");
    // The second: x.test, its marked default, and y.test answering everywhere.
    CHECK(site_of(second, "x.test") == "200 x");
    CHECK(site_of(second, "other.test") == "200 x");
    CHECK(site_of(second, "y.test") == "200 y");
}

TEST_CASE("sites: top-level locations are the site for hosts no [[site]] names", "[sites]") {
    Portico portico(R"(
[server]
listen = ["{listen}"]
workers = 1

[[location]]
prefix = "/"
respond = { status = 200, body = "unnamed" }

[[site]]
names = ["a.test"]
  [[site.location]]
  exact = "/a"
  respond = { status = 200, body = "a" }
)");
    CHECK(site_of(portico.port(), "a.test", "/a") == "200 a");
    CHECK(site_of(portico.port(), "a.test", "/") ==
          "404 404 Not Found\n");  // not the unnamed site's
    CHECK(site_of(portico.port(), "other.test", "/") == "200 unnamed");
    CHECK(site_of(portico.port(), "other.test", "/a") == "200 unnamed");
}

}  // namespace sites_test
