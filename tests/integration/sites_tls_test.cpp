// [[site]] over TLS: a site's certificate chosen by SNI, the site of a
// request chosen by its Host, and 421 when the Host names another site than
// the connection's (RFC 9110 7.4; HTTP/2 clients reuse a connection for
// every name its certificate covers), over HTTP/1.1 and h2.
#include <catch2/catch.hpp>

#include "http2_support.hpp"
#include "proxy_support.hpp"
#include "tls_support.hpp"

using namespace portico::test;

// Its own namespace: in a unity build the test files share one translation
// unit, and their helpers (Answer, fake_path...) must not meet.
namespace sites_tls_test {

namespace {

// [tls]'s default certificate is a.pem (a.test, www.a.test); the wildcard
// site has wild.pem (*.x.test), rsa.test has rsa.pem.
std::string sites_tls_config(const Certificates& certs) {
    return tls_config({certs.entry("a")}, R"(
[[site]]
names = ["a.test"]
  [[site.location]]
  prefix = "/"
  respond = { status = 200, body = "a" }

[[site]]
names = ["*.x.test"]
certificate = )" + certs.entry("wild") + R"(
  [[site.location]]
  prefix = "/"
  respond = { status = 200, body = "x" }

[[site]]
names = ["rsa.test"]
certificate = )" + certs.entry("rsa") + R"(
  [[site.location]]
  prefix = "/"
  respond = { status = 200, body = "rsa" }
)");
}

TlsOptions sni(const std::string& name) {
    TlsOptions options;
    options.server_name = name;
    options.alpn = {"http/1.1"};
    return options;
}

std::string get(const std::string& host) {
    return "GET / HTTP/1.1\r\nHost: " + host + "\r\n\r\n";
}

std::optional<Response> ask(TlsClient& client, const std::string& request) {
    if (!client.send(request)) return std::nullopt;
    ResponseReader reader(client);
    return reader.read();
}

}  // namespace

TEST_CASE("sites over TLS: the SNI chooses the site's certificate", "[sites][tls]") {
    Certificates certs;
    Portico portico(sites_tls_config(certs));
    const uint16_t port = tls_port(portico);
    const std::pair<const char*, const char*> names[] = {
        {"rsa.test", "DNS:rsa.test"},
        {"one.x.test", "DNS:*.x.test"},
        {"ONE.X.TEST.", "DNS:*.x.test"},
        {"a.test", "DNS:a.test,DNS:www.a.test"},
        {"unknown.test", "DNS:a.test,DNS:www.a.test"},  // [tls]'s first
    };
    for (const auto& [name, covered] : names) {
        TlsClient client(port, sni(name));
        INFO(name);
        REQUIRE(client.handshake());
        CHECK(client.peer_names() == covered);
    }
}

TEST_CASE("sites over TLS: a site's certificate only on the listeners it answers on",
          "[sites][tls]") {
    Certificates certs;
    const std::string second = "127.0.0.1:" + std::to_string(unused_port());
    Portico portico(R"(
[server]
listen = ["{listen}"]
workers = 1

[tls]
listen = ["127.0.0.1:0", ")" +
                    second + R"("]
certificates = [)" + certs.entry("a") +
                    R"(]

[[site]]
names = ["rsa.test"]
listen = [")" + second +
                    R"("]
certificate = )" + certs.entry("rsa") +
                    R"(
  [[site.location]]
  prefix = "/"
  respond = { status = 200, body = "rsa" }

[[site]]
names = ["a.test"]
  [[site.location]]
  prefix = "/"
  respond = { status = 200, body = "a" }
)");
    const uint16_t second_port = static_cast<uint16_t>(std::stoi(second.substr(10)));
    TlsClient there(second_port, sni("rsa.test"));
    REQUIRE(there.handshake());
    CHECK(there.peer_names() == "DNS:rsa.test");
    std::optional<Response> response = ask(there, get("rsa.test"));
    REQUIRE(response);
    CHECK(response->body == "rsa");
    // On the first TLS listener rsa.test is no site: [tls]'s certificate,
    // and the site there (a.test, the only one) answers.
    TlsClient here(tls_port(portico), sni("rsa.test"));
    REQUIRE(here.handshake());
    CHECK(here.peer_names() == "DNS:a.test,DNS:www.a.test");
    response = ask(here, get("rsa.test"));
    REQUIRE(response);
    CHECK(response->body == "a");
}

TEST_CASE("sites over TLS: a Host of the SNI's site is served, another site's gets 421",
          "[sites][tls]") {
    Certificates certs;
    Portico portico(sites_tls_config(certs));
    TlsClient client(tls_port(portico), sni("rsa.test"));
    REQUIRE(client.handshake());
    std::optional<Response> response = ask(client, get("rsa.test"));
    REQUIRE(response);
    CHECK(response->body == "rsa");
    response = ask(client, get("a.test"));
    REQUIRE(response);
    CHECK(response->status == 421);
    response = ask(client, get("unknown.test"));  // the default site: not this one either
    REQUIRE(response);
    CHECK(response->status == 421);
    // The connection still serves its own site.
    response = ask(client, get("RSA.test:443"));
    REQUIRE(response);
    CHECK(response->status == 200);
    CHECK(response->body == "rsa");
}

TEST_CASE("sites over TLS: without Host the SNI's site answers, without SNI the Host's",
          "[sites][tls]") {
    Certificates certs;
    Portico portico(sites_tls_config(certs));
    std::optional<Response> response =
        tls_fetch(tls_port(portico), "GET / HTTP/1.0\r\n\r\n", sni("two.x.test"));
    REQUIRE(response);
    CHECK(response->body == "x");
    response = tls_fetch(tls_port(portico), get("rsa.test"), sni(""));
    REQUIRE(response);
    CHECK(response->body == "rsa");
}

TEST_CASE("sites over h2: a stream for another site than the SNI's gets 421",
          "[sites][tls][http2]") {
    Certificates certs;
    Portico portico(sites_tls_config(certs));
    h2::ClientOptions options;
    options.tls = true;
    options.tls_options.server_name = "one.x.test";
    h2::Client client(tls_port(portico), options);
    REQUIRE(client.connected());
    REQUIRE(client.alpn() == "h2");
    uint32_t own = client.get("/", {}, "GET", "two.x.test");
    uint32_t other = client.get("/", {}, "GET", "rsa.test");
    REQUIRE(client.wait_streams({own, other}));
    CHECK(client.result(own).status == 200);
    CHECK(client.result(own).body == "x");
    CHECK(client.result(other).status == 421);
    uint32_t again = client.get("/", {}, "GET", "three.x.test");
    REQUIRE(client.wait_stream(again));
    CHECK(client.result(again).body == "x");
}

TEST_CASE("sites over TLS: portico -t loads each site's certificate", "[sites][tls]") {
    Certificates certs;
    TempDir dir;
    std::string path = dir.write("check.toml",
                                 "[server]\nlisten = [\"127.0.0.1:0\"]\n"  // 1-2
                                 "[tls]\nlisten = [\"127.0.0.1:0\"]\n"     // 3-4
                                 "certificates = [" +
                                     certs.entry("a") +
                                     "]\n"                                 // 5
                                     "[[site]]\nnames = [\"rsa.test\"]\n"  // 6-7
                                     "certificate = { cert = \"" +
                                     certs.path("rsa.pem") +  // 8
                                     "\", key = \"" + certs.path("a.key") + "\" }\n");
    CommandResult result = check_config(path);
    CHECK(result.exit_code != 0);
    CHECK(contains(result.output, path + ":8:15: key " + certs.path("a.key") +
                                      " does not match certificate " + certs.path("rsa.pem")));
}

}  // namespace sites_tls_test
