// Upstreams with `tls`: proxied to a real HTTPS origin (Node's `https`,
// https_upstream.hpp) with certificates made by the test. Verified by
// default, SNI, ALPN http/1.1, pooled and resumed connections, a client
// certificate; a wrong name, an expired certificate or a missing client
// certificate is a 502 logged and counted as kind="tls", served with
// verify = false; WebSocket through it; HTTP/1.1 and HTTP/2 clients.
#include <catch2/catch.hpp>

#include <string>

#include "http2_support.hpp"
#include "https_upstream.hpp"
#include "proxy_support.hpp"
#include "tls_support.hpp"

using namespace portico::test;

namespace proxy_tls_upstream_test {

// Made once for the whole file (key generation is most of a test's time),
// with two leaves of their own: "ip" (SAN IP:127.0.0.1) and "client" (a
// client certificate, CN portico-client).
struct FileCertificates {
    FileCertificates() {
        make_leaf(certs.dir(), "ip", "/CN=ip", "IP:127.0.0.1", "serverAuth");
        make_leaf(certs.dir(), "client", "/CN=portico-client", "DNS:client.test", "clientAuth");
    }
    Certificates certs;
};

const Certificates& certificates() {
    static const FileCertificates made;
    return made.certs;
}

// [upstream.NAME] at `server` with `tls`, and a prefix location /NAME/.
std::string upstream(const std::string& name, const std::string& server, const std::string& tls,
                     const std::string& options = "") {
    return "[upstream." + name + "]\nservers = [\"" + server + "\"]\ntls = " + tls + "\n" +
           options + "\n[[location]]\nprefix = \"/" + name + "/\"\nproxy = \"" + name + "\"\n\n";
}

std::string config(const std::string& upstreams, uint16_t metrics_port) {
    return with_metrics(
        "[server]\nlisten = [\"{listen}\"]\nworkers = 1\n[http2]\ncleartext = true\n\n" + upstreams,
        metrics_port);
}

double tls_errors(uint16_t metrics_port, const std::string& name, const HttpsUpstream& server) {
    return metric(metrics_port, "portico_upstream_errors_total{upstream=\"" + name +
                                    "\",server=\"" + server.address() + "\",kind=\"tls\"}");
}

double series(uint16_t metrics_port, const std::string& metric_name, const std::string& name,
              const HttpsUpstream& server) {
    return metric(metrics_port,
                  metric_name + "{upstream=\"" + name + "\",server=\"" + server.address() + "\"}");
}

std::string pattern(size_t size) {
    std::string bytes(size, '0');
    for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>('0' + i % 10);
    return bytes;
}

// The next client is served: a failure left the server working.
void check_still_serves(uint16_t port, const std::string& target) {
    auto response = proxy_fetch(port, get_request(target));
    REQUIRE(response);
    CHECK(response->status == 200);
    CHECK(response->body == "hello " + target);
}

TEST_CASE("a verified TLS upstream is proxied over pooled connections", "[upstream-tls]") {
    const Certificates& certs = certificates();
    HttpsUpstream origin({certs.path("a.pem"), certs.path("a.key"), ""});
    uint16_t metrics_port = unused_port();
    Portico portico(config(upstream("app", origin.address(),
                                    "{ ca = \"" + certs.ca() + "\", server_name = \"a.test\" }"),
                           metrics_port));

    Client client(portico.port());
    ResponseReader reader(client.fd());
    for (int i = 0; i < 3; ++i) {
        client.send(get_request("/app/r" + std::to_string(i)));
        auto response = reader.read();
        REQUIRE(response);
        CHECK(response->status == 200);
        CHECK(response->body == "hello /app/r" + std::to_string(i));
        CHECK(response->header("x-alpn") == "http/1.1");
        CHECK(response->header("x-sni") == "a.test");
        CHECK(response->header("x-connection") == "1");
    }
    // Many records each way: a large response, and a large request body.
    client.send(get_request("/app/big/300000"));
    auto big = reader.read();
    REQUIRE(big);
    CHECK(big->status == 200);
    CHECK(big->body == pattern(300000));
    std::string upload = pattern(100000);
    client.send("POST /app/echo HTTP/1.1\r\nHost: front.example\r\nContent-Length: " +
                std::to_string(upload.size()) + "\r\n\r\n" + upload);
    auto echoed = reader.read();
    REQUIRE(echoed);
    CHECK(echoed->status == 200);
    CHECK(echoed->body == upload);

    h2::Client h2client(portico.port());
    uint32_t id = h2client.get("/app/over-h2");
    REQUIRE(h2client.wait_stream(id));
    CHECK(h2client.result(id).status == 200);
    CHECK(h2client.result(id).body == "hello /app/over-h2");

    // One connection, one handshake, for all six requests.
    CHECK(series(metrics_port, "portico_upstream_connections_opened_total", "app", origin) == 1);
    CHECK(series(metrics_port, "portico_upstream_connections_reused_total", "app", origin) == 5);
    CHECK(tls_errors(metrics_port, "app", origin) == 0);
}

TEST_CASE("connections to a TLS upstream resume the server's session", "[upstream-tls]") {
    const Certificates& certs = certificates();
    HttpsUpstream origin({certs.path("a.pem"), certs.path("a.key"), ""});
    uint16_t metrics_port = unused_port();
    // keepalive = 0: a new connection, so a handshake, per request.
    Portico portico(config(
        upstream("app", origin.address(),
                 "{ ca = \"" + certs.ca() + "\", server_name = \"a.test\" }", "keepalive = 0\n"),
        metrics_port));
    // A TLS 1.3 ticket is used once (RFC 8446 C.4), and Node gives no new
    // one on a resumed connection: every other connection resumes, as
    // nginx's would.
    for (int i = 0; i < 4; ++i) {
        auto response = proxy_fetch(portico.port(), get_request("/app/" + std::to_string(i)));
        REQUIRE(response);
        CHECK(response->status == 200);
        CHECK(response->header("x-connection") == std::to_string(i + 1));
        CHECK(response->header("x-resumed") == (i % 2 == 1 ? "true" : "false"));
    }
    CHECK(series(metrics_port, "portico_upstream_connections_opened_total", "app", origin) == 4);
}

TEST_CASE("a certificate for another name is a 502, served with verify = false", "[upstream-tls]") {
    const Certificates& certs = certificates();
    HttpsUpstream origin({certs.path("a.pem"), certs.path("a.key"), ""});
    HttpsUpstream by_ip({certs.path("ip.pem"), certs.path("ip.key"), ""});
    std::string ca = "ca = \"" + certs.ca() + "\"";
    uint16_t metrics_port = unused_port();
    Portico portico(
        config(upstream("strict", origin.address(), "{ " + ca + ", server_name = \"b.test\" }") +
                   upstream("lax", origin.address(),
                            "{ " + ca + ", server_name = \"b.test\", verify = false }") +
                   // No server_name: the server's address, an IP, is what is checked.
                   upstream("address", origin.address(), "{ " + ca + " }") +
                   upstream("ipsan", by_ip.address(), "{ " + ca + " }"),
               metrics_port));

    auto refused = proxy_fetch(portico.port(), get_request("/strict/x"));
    REQUIRE(refused);
    CHECK(refused->status == 502);
    CHECK(portico.wait_for_log("certificate verify failed: hostname mismatch (tls)"));
    CHECK(tls_errors(metrics_port, "strict", origin) == 1);
    check_still_serves(portico.port(), "/lax/x");

    auto by_address = proxy_fetch(portico.port(), get_request("/address/x"));
    REQUIRE(by_address);
    CHECK(by_address->status == 502);
    CHECK(portico.wait_for_log("certificate verify failed: IP address mismatch"));
    check_still_serves(portico.port(), "/ipsan/x");
    // An IP address is verified, never sent as SNI.
    auto ip = proxy_fetch(portico.port(), get_request("/ipsan/y"));
    REQUIRE(ip);
    CHECK(ip->header("x-sni") == "none");

    h2::Client h2client(portico.port());
    uint32_t failed = h2client.get("/strict/over-h2");
    REQUIRE(h2client.wait_stream(failed));
    CHECK(h2client.result(failed).status == 502);
    uint32_t served = h2client.get("/lax/over-h2");
    REQUIRE(h2client.wait_stream(served));
    CHECK(h2client.result(served).status == 200);
    CHECK(h2client.result(served).body == "hello /lax/over-h2");
    CHECK(tls_errors(metrics_port, "strict", origin) == 2);
}

TEST_CASE("an expired certificate is a 502, served with verify = false", "[upstream-tls]") {
    const Certificates& certs = certificates();
    HttpsUpstream origin({certs.path("old.pem"), certs.path("old.key"), ""});
    std::string ca = "ca = \"" + certs.ca() + "\", server_name = \"old.test\"";
    uint16_t metrics_port = unused_port();
    Portico portico(config(upstream("strict", origin.address(), "{ " + ca + " }") +
                               upstream("lax", origin.address(), "{ " + ca + ", verify = false }"),
                           metrics_port));
    auto refused = proxy_fetch(portico.port(), get_request("/strict/x"));
    REQUIRE(refused);
    CHECK(refused->status == 502);
    CHECK(portico.wait_for_log("certificate verify failed: certificate has expired"));
    CHECK(tls_errors(metrics_port, "strict", origin) == 1);
    check_still_serves(portico.port(), "/lax/x");
}

TEST_CASE("an upstream that requires a client certificate gets the configured one",
          "[upstream-tls]") {
    const Certificates& certs = certificates();
    HttpsUpstream origin({certs.path("a.pem"), certs.path("a.key"), certs.ca()});
    std::string tls = "ca = \"" + certs.ca() + "\", server_name = \"a.test\"";
    uint16_t metrics_port = unused_port();
    Portico portico(config(upstream("anonymous", origin.address(), "{ " + tls + " }") +
                               upstream("app", origin.address(),
                                        "{ " + tls + ", cert = \"" + certs.path("client.pem") +
                                            "\", key = \"" + certs.path("client.key") + "\" }"),
                           metrics_port));
    auto refused = proxy_fetch(portico.port(), get_request("/anonymous/x"));
    REQUIRE(refused);
    CHECK(refused->status == 502);
    CHECK(tls_errors(metrics_port, "anonymous", origin) == 1);
    CHECK(portico.wait_for_log("upstream 'anonymous' server " + origin.address()));

    auto served = proxy_fetch(portico.port(), get_request("/app/x"));
    REQUIRE(served);
    CHECK(served->status == 200);
    CHECK(served->body == "hello /app/x");
    CHECK(served->header("x-client") == "portico-client");
}

TEST_CASE("a WebSocket goes through a TLS upstream", "[upstream-tls]") {
    const Certificates& certs = certificates();
    HttpsUpstream origin({certs.path("a.pem"), certs.path("a.key"), ""});
    Portico portico(config(upstream("app", origin.address(),
                                    "{ ca = \"" + certs.ca() + "\", server_name = \"a.test\" }"),
                           unused_port()));
    Client client(portico.port());
    ResponseReader reader(client.fd());
    client.send(
        "GET /app/ws HTTP/1.1\r\nHost: front.example\r\nUpgrade: websocket\r\nConnection: "
        "Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: "
        "13\r\n\r\n");
    auto head = reader.read_head();
    REQUIRE(head);
    CHECK(head->status == 101);
    client.send("through TLS");
    REQUIRE(reader.read_at_least(11, 2s));
    CHECK(reader.buffered() == "through TLS");
    reader.discard();
    std::string large = pattern(50000);
    client.send(large);
    REQUIRE(reader.read_at_least(large.size(), 5s));
    CHECK(reader.buffered() == large);
}

TEST_CASE("proxy = \"https://...\" is a verified TLS upstream", "[upstream-tls]") {
    const Certificates& certs = certificates();
    HttpsUpstream origin({certs.path("a.pem"), certs.path("a.key"), ""});
    // The system's trusted roots do not include the test's CA.
    Portico portico(
        "[server]\nlisten = [\"{listen}\"]\nworkers = 1\n[[location]]\nprefix = "
        "\"/\"\nproxy = \"https://" +
        origin.address() + "\"\n");
    auto refused = proxy_fetch(portico.port(), get_request("/x"));
    REQUIRE(refused);
    CHECK(refused->status == 502);
    CHECK(
        portico.wait_for_log("certificate verify failed: unable to get local issuer certificate"));
}

TEST_CASE("portico -t reports an upstream's unusable TLS files at their line", "[upstream-tls]") {
    const Certificates& certs = certificates();
    TempDir dir;
    auto check = [&](const std::string& tls) {
        std::string path = dir.write("check.toml",
                                     "[server]\nlisten = [\"127.0.0.1:0\"]\n"
                                     "[upstream.api]\nservers = [\"127.0.0.1:3000\"]\n"
                                     "tls = " +
                                         tls + "\n");
        return std::make_pair(check_config(path), path);
    };
    auto [missing_ca, path] = check("{ ca = \"" + certs.path("missing.pem") + "\" }");
    CHECK(missing_ca.exit_code == 1);
    CHECK_THAT(missing_ca.output,
               Catch::Contains(path + ":5:7: cannot read ca " + certs.path("missing.pem")));
    auto [missing_cert, ignored1] = check("{ cert = \"" + certs.path("none.pem") + "\", key = \"" +
                                          certs.path("a.key") + "\" }");
    CHECK(missing_cert.exit_code == 1);
    CHECK_THAT(missing_cert.output, Catch::Contains(":5:7: cannot read certificate"));
    auto [mismatch, ignored2] = check("{ cert = \"" + certs.path("a.pem") + "\", key = \"" +
                                      certs.path("rsa.key") + "\" }");
    CHECK(mismatch.exit_code == 1);
    CHECK_THAT(mismatch.output,
               Catch::Contains(":5:7: key " + certs.path("rsa.key") +
                               " does not match certificate " + certs.path("a.pem")));
    auto [valid, ignored3] = check("{ server_name = \"api.internal\", verify = false }");
    CHECK(valid.exit_code == 0);
}

}  // namespace proxy_tls_upstream_test
