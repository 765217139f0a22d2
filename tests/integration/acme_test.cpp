// ACME against Debian's pebble on loopback (-strict, validating HTTP-01 on
// portico's own cleartext listener): a site with `acme = true` gets its
// certificate and serves it, a restart reuses it, a short-lived one is
// renewed under a client's open connection; a CA that is unreachable,
// answers 5xx or lies is retried with back-off while the default
// certificate serves; an unknown challenge token is a 404.
#include <openssl/x509.h>
#include <sys/stat.h>

#include <signal.h>

#include <atomic>
#include <thread>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "acme_support.hpp"
#include "http2_support.hpp"
#include "metrics_support.hpp"
#include "skip.hpp"
#include "tls_support.hpp"

using namespace portico::test;

namespace acme_test {

namespace {

TlsOptions sni(const std::string& name, const std::string& ca_file = "") {
    TlsOptions options;
    options.server_name = name;
    options.ca_file = ca_file;
    return options;
}

// The served leaf's DNS names, after a handshake naming `name`.
std::string served_names(uint16_t port, const std::string& name) {
    TlsClient client(port, sni(name));
    REQUIRE(client.handshake());
    return client.peer_names();
}

std::optional<Response> get_over_tls(uint16_t port, const std::string& name,
                                     const std::string& ca_file = "") {
    return tls_fetch(port, "GET / HTTP/1.1\r\nHost: " + name + "\r\nConnection: close\r\n\r\n",
                     sni(name, ca_file));
}

// The serial of the leaf served to `openssl s_client` naming `name`.
std::string served_serial(uint16_t port, const std::string& name) {
    return run_shell("echo | openssl s_client -connect 127.0.0.1:" + std::to_string(port) +
                     " -servername " + name + " 2>/dev/null | openssl x509 -noout -serial")
        .output;
}

std::string stored_serial(const std::string& chain_file) {
    return run_shell("openssl x509 -noout -serial -in " + chain_file).output;
}

nlohmann::json acme_stats(const Portico& portico) {
    nlohmann::json stats = nlohmann::json::parse(scrape(metrics_port(portico), "/stats"));
    REQUIRE(stats.contains("acme"));
    REQUIRE(stats["acme"]["certificates"].size() == 1);
    return stats["acme"]["certificates"][0];
}

int count_of(const std::string& text, const std::string& part) {
    int count = 0;
    for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1))
        ++count;
    return count;
}

}  // namespace

TEST_CASE("acme: a site gets its certificate from pebble, serves it, and a restart reuses it",
          "[acme]") {
    if (!pebble_installed())
        PORTICO_SKIP("pebble is not installed (deploy/install-deps.sh --test)");
    Certificates certs;
    TempDir storage;
    uint16_t http_port = free_port();
    // A lying CA: a third of the good nonces are refused (badNonce), each
    // request is signed again with the nonce that came with the refusal.
    Pebble pebble({.http_port = http_port, .nonce_reject_percent = 30});
    // redirect_http: the challenge is answered before the redirect.
    const std::string config =
        acme_config(http_port, certs.entry("a"), pebble.directory(), pebble.api_root(),
                    storage.path(), "redirect_http = true\n");
    std::string first_chain;
    {
        Portico portico(config);
        INFO(portico.log());
        REQUIRE(portico.wait_for_log("new certificate for a.acme.test", 1, 20s));
        uint16_t port = tls_port(portico);
        // The served chain verifies against pebble's issuing root and names the site.
        TlsClient client(port, sni("www.a.acme.test", pebble.issuing_root()));
        REQUIRE(client.handshake());
        CHECK(client.verify_result() == X509_V_OK);
        CHECK(client.peer_names() == "DNS:a.acme.test,DNS:www.a.acme.test");
        auto response = get_over_tls(port, "a.acme.test", pebble.issuing_root());
        REQUIRE(response);
        CHECK(response->status == 200);
        CHECK(response->body == "acme site\n");
        // Another name of the listener keeps [tls]'s certificate.
        CHECK(served_names(port, "other.test") == "DNS:a.test,DNS:www.a.test");
        nlohmann::json state = acme_stats(portico);
        CHECK(state["last_error"] == "");
        CHECK(state["expires_in_seconds"].get<int64_t>() > 86400);
        CHECK(state["names"] == nlohmann::json::array({"a.acme.test", "www.a.acme.test"}));
        // OCSP stapling follows the new certificate (pebble's names no responder).
        REQUIRE(portico.wait_for_log(
            "ocsp: a.acme.test: not stapled: the certificate names no OCSP responder"));
        CHECK(acme_stats(portico)["ocsp_last_error"] == "the certificate names no OCSP responder");
        // Stored for the master's user only.
        for (const char* file : {"/a.acme.test.crt", "/a.acme.test.key", "/account.key"}) {
            struct stat info {};
            REQUIRE(::stat((storage.path() + file).c_str(), &info) == 0);
            CHECK((info.st_mode & 0777) == 0600);
        }
        first_chain = read_text(storage.path() + "/a.acme.test.crt");
        CHECK_THAT(served_serial(port, "a.acme.test"), Catch::StartsWith("serial="));
        CHECK(served_serial(port, "a.acme.test") ==
              stored_serial(storage.path() + "/a.acme.test.crt"));
        // A reload: the new ACME process hands the stored certificate to the new workers.
        portico.signal(SIGHUP);
        REQUIRE(portico.wait_for_log("reusing the stored certificate of a.acme.test"));
        REQUIRE(portico.wait_for_log("reloaded"));
        std::this_thread::sleep_for(200ms);
        TlsClient reloaded(port, sni("a.acme.test", pebble.issuing_root()));
        REQUIRE(reloaded.handshake());
        CHECK(reloaded.verify_result() == X509_V_OK);
        CHECK(count_of(portico.log(), "ordering a certificate") == 1);
        portico.signal(SIGTERM);
        REQUIRE(portico.wait_exit(10s));
    }
    Portico again(config);
    INFO(again.log());
    REQUIRE(again.wait_for_log("reusing the stored certificate of a.acme.test"));
    // Served before any order could have been made, and none is.
    auto response = get_over_tls(tls_port(again), "a.acme.test", pebble.issuing_root());
    REQUIRE(response);
    CHECK(response->status == 200);
    std::this_thread::sleep_for(300ms);
    CHECK_FALSE(contains(again.log(), "ordering a certificate"));
    CHECK(read_text(storage.path() + "/a.acme.test.crt") == first_chain);
}

TEST_CASE(
    "acme: a short-lived certificate is renewed at two thirds of its life, under an open "
    "connection",
    "[acme]") {
    if (!pebble_installed())
        PORTICO_SKIP("pebble is not installed (deploy/install-deps.sh --test)");
    Certificates certs;
    TempDir storage;
    uint16_t http_port = free_port();
    // 6 s: renewed 4 to 4.2 s after it was issued.
    auto pebble =
        std::make_unique<Pebble>(PebbleOptions{.http_port = http_port, .validity_seconds = 6});
    Portico portico(acme_config(http_port, certs.entry("a"), pebble->directory(),
                                pebble->api_root(), storage.path()));
    INFO(portico.log());
    REQUIRE(portico.wait_for_log("new certificate for a.acme.test", 1, 20s));
    uint16_t port = tls_port(portico);
    std::string first = read_text(storage.path() + "/a.acme.test.crt");
    const std::string issuing_root = pebble->issuing_root();
    // A keep-alive connection made on the first certificate.
    TlsClient open(port, sni("a.acme.test", issuing_root));
    REQUIRE(open.handshake());
    // Clients keep coming through the swap: every one is served.
    std::atomic<bool> swapping{true};
    std::atomic<int> served{0}, failed{0};
    std::thread load([&] {
        while (swapping) {
            auto answer = get_over_tls(port, "a.acme.test");
            (answer && answer->status == 200 ? served : failed)++;
        }
    });
    bool renewed = portico.wait_for_log("new certificate for a.acme.test", 2, 15s);
    std::this_thread::sleep_for(200ms);
    swapping = false;
    load.join();
    REQUIRE(renewed);
    CHECK(failed == 0);
    CHECK(served > 10);
    std::string second = read_text(storage.path() + "/a.acme.test.crt");
    CHECK(second != first);
    const std::string chain_file = storage.path() + "/a.acme.test.crt";
    CHECK_THAT(served_serial(port, "a.acme.test"), Catch::StartsWith("serial="));
    CHECK(served_serial(port, "a.acme.test") == stored_serial(chain_file));
    // New handshakes get the new certificate, without a reload.
    TlsClient fresh(port, sni("a.acme.test", issuing_root));
    REQUIRE(fresh.handshake());
    CHECK(fresh.verify_result() == X509_V_OK);
    CHECK_FALSE(contains(portico.log(), "reload"));
    // The old connection still serves.
    REQUIRE(open.send("GET / HTTP/1.1\r\nHost: a.acme.test\r\n\r\n"));
    ResponseReader reader(open);
    auto response = reader.read(5s);
    REQUIRE(response);
    CHECK(response->status == 200);

    // The CA goes away: the next renewal fails, and the last good
    // certificate is still served (not [tls]'s default).
    int64_t not_after = acme_stats(portico)["not_after"].get<int64_t>();
    pebble.reset();
    REQUIRE(portico.wait_for_log("still serving the last good certificate", 1, 10s));
    CHECK(served_names(port, "a.acme.test") == "DNS:a.acme.test,DNS:www.a.acme.test");
    nlohmann::json state = acme_stats(portico);
    CHECK(state["not_after"].get<int64_t>() == not_after);
    CHECK_THAT(state["last_error"].get<std::string>(), Catch::Contains("cannot connect"));
    CHECK(read_text(storage.path() + "/a.acme.test.crt") == second);
}

TEST_CASE(
    "acme: when HTTP-01 fails, a new order proves the names by TLS-ALPN-01 on the TLS "
    "listener",
    "[acme]") {
    if (!pebble_installed())
        PORTICO_SKIP("pebble is not installed (deploy/install-deps.sh --test)");
    Certificates certs;
    TempDir storage;
    uint16_t http_port = free_port(), fixed_tls_port = free_port();
    // HTTP-01 is validated where nobody listens: it fails, and TLS-ALPN-01 is next.
    Pebble pebble({.http_port = free_port(), .tls_port = fixed_tls_port});
    std::string config = acme_config(http_port, certs.entry("a"), pebble.directory(),
                                     pebble.api_root(), storage.path());
    const std::string any_port = "listen = [\"127.0.0.1:0\"]\ncertificates";
    config.replace(config.find(any_port), any_port.size(),
                   "listen = [\"127.0.0.1:" + std::to_string(fixed_tls_port) + "\"]\ncertificates");
    Portico portico(config);
    INFO(portico.log());
    REQUIRE(portico.wait_for_log("by http-01 is invalid", 1, 20s));
    REQUIRE(portico.wait_for_log("new certificate for a.acme.test", 1, 20s));
    CHECK(contains(portico.log(),
                   "ordering a certificate for a.acme.test, www.a.acme.test (tls-alpn-01)"));
    TlsClient client(fixed_tls_port, sni("www.a.acme.test", pebble.issuing_root()));
    REQUIRE(client.handshake());
    CHECK(client.verify_result() == X509_V_OK);
    CHECK(client.peer_names() == "DNS:a.acme.test,DNS:www.a.acme.test");
    // acme-tls/1 for a name not being validated: an ordinary handshake
    // without ALPN, on the site's certificate.
    TlsOptions probe = sni("a.acme.test", pebble.issuing_root());
    probe.alpn = {"acme-tls/1"};
    TlsClient prober(fixed_tls_port, probe);
    REQUIRE(prober.handshake());
    CHECK(prober.alpn() == "");
    CHECK(prober.verify_result() == X509_V_OK);
    auto response = get_over_tls(fixed_tls_port, "a.acme.test", pebble.issuing_root());
    REQUIRE(response);
    CHECK(response->status == 200);
}

TEST_CASE("acme: an unreachable CA is retried with back-off while the default certificate serves",
          "[acme]") {
    Certificates certs;
    TempDir storage;
    // Nobody listens there.
    std::string directory = "https://127.0.0.1:" + std::to_string(free_port()) + "/dir";
    Portico portico(acme_config(0, certs.entry("a"), directory, certs.ca(), storage.path(), "",
                                "\n[http2]\ncleartext = true\n"));
    INFO(portico.log());
    REQUIRE(portico.wait_for_log("next attempt in 2 s"));
    CHECK(contains(portico.log(), "cannot connect to 127.0.0.1"));
    CHECK(contains(portico.log(), "serving [tls]'s default certificate meanwhile"));
    // Until the first certificate arrives, the site is served on [tls]'s.
    uint16_t port = tls_port(portico);
    CHECK(served_names(port, "a.acme.test") == "DNS:a.test,DNS:www.a.test");
    auto response = get_over_tls(port, "a.acme.test");
    REQUIRE(response);
    CHECK(response->status == 200);
    nlohmann::json state = acme_stats(portico);
    CHECK_THAT(state["last_error"].get<std::string>(), Catch::Contains("cannot connect"));
    CHECK(state["not_after"] == 0);
    int64_t first_retry = state["next_attempt"].get<int64_t>();
    // The retry 2 s later fails the same way: the next one is 4 s after it,
    // and the unchanged error is not logged again.
    std::this_thread::sleep_for(2500ms);
    int64_t second_retry = acme_stats(portico)["next_attempt"].get<int64_t>();
    CHECK(second_retry >= first_retry + 3);
    CHECK(count_of(portico.log(), "cannot connect to 127.0.0.1") == 1);

    // An unknown challenge token: 404, over HTTP/1.1 and HTTP/2, and the next client is served.
    auto missing = fetch(portico.port(), "/.well-known/acme-challenge/no-such-token");
    REQUIRE(missing);
    CHECK(missing->status == 404);
    h2::Client client(portico.port());
    uint32_t id = client.get("/.well-known/acme-challenge/no-such-token");
    REQUIRE(client.wait_stream(id));
    CHECK(client.result(id).status == 404);
    auto next = fetch(portico.port(), "/");
    REQUIRE(next);
    CHECK(next->status == 200);
}

TEST_CASE("acme: a CA answering 503 with Retry-After, or not JSON, is retried later", "[acme]") {
    Certificates certs;
    struct Case {
        const char* what;
        std::string response;
        std::string logged;
    };
    const Case cases[] = {
        {"503 with Retry-After: 7",
         "HTTP/1.0 503 Service Unavailable\r\nRetry-After: 7\r\nContent-Type: "
         "application/problem+json\r\n\r\n{\"type\":\"urn:ietf:params:acme:error:serverInternal\","
         "\"detail\":\"down for maintenance\"}",
         "HTTP 503 serverInternal: down for maintenance; serving [tls]'s default certificate "
         "meanwhile, next attempt in 7 s"},
        {"a directory that is not JSON",
         "HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n{\"newNonce\": ",
         "has no \"newNonce\"; serving [tls]'s default certificate meanwhile, next attempt in 2 s"},
    };
    for (const Case& c : cases) {
        INFO(c.what);
        FakeCa ca(c.response);
        TempDir storage;
        Portico portico(
            acme_config(0, certs.entry("a"), ca.directory(), ca.api_root(), storage.path()));
        INFO(portico.log());
        CHECK(portico.wait_for_log(c.logged));
        auto response = get_over_tls(tls_port(portico), "a.acme.test");
        REQUIRE(response);
        CHECK(response->status == 200);
        CHECK(served_names(tls_port(portico), "a.acme.test") == "DNS:a.test,DNS:www.a.test");
    }
}

}  // namespace acme_test
