// /stats' "tls" member: the certificates portico serves from files ([tls]'s
// list and a site's `certificate`), each once, with its DNS names (the CN
// when it has none), its file, its expiry and the seconds left, read again
// at a reload; no member without certificate files. The dashboard's
// certificates panel shows them (tests/browser/dashboard_test.js).
#include <signal.h>

#include <ctime>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "harness.hpp"
#include "metrics_support.hpp"
#include "tls_support.hpp"

using namespace portico::test;

namespace {

nlohmann::json stats_of(const Portico& portico) {
    return nlohmann::json::parse(scrape(metrics_port(portico), "/stats"));
}

// Whether `pem` expires within `seconds`, as openssl's -checkend sees it.
bool expires_within(const std::string& pem, int64_t seconds) {
    return run_shell("openssl x509 -noout -checkend " + std::to_string(seconds) + " -in " + pem)
               .exit_code != 0;
}

}  // namespace

TEST_CASE("stats: each certificate file's names and expiry, read again at a reload",
          "[metrics][tls]") {
    Certificates certs;
    const std::string metrics = "\n[metrics]\nlisten = \"127.0.0.1:0\"\n";
    // `a` twice (in [tls] and as a site's): listed once.
    const std::string sites =
        metrics + "[[site]]\nnames = [\"cn.test\"]\ncertificate = " + certs.entry("cn") +
        "\n[[site.location]]\nprefix = \"/\"\nrespond = { status = 204 }\n"
        "[[site]]\nnames = [\"a.test\"]\ncertificate = " +
        certs.entry("a") + "\n[[site.location]]\nprefix = \"/\"\nrespond = { status = 204 }\n";
    Portico portico(tls_config({certs.entry("a"), certs.entry("soon")}, sites));
    INFO(portico.log());
    nlohmann::json stats = stats_of(portico);
    CHECK_FALSE(stats.contains("acme"));
    REQUIRE(stats.contains("tls"));
    const nlohmann::json& listed = stats["tls"]["certificates"];
    REQUIRE(listed.size() == 3);
    CHECK(listed[0]["names"] == nlohmann::json::array({"a.test", "www.a.test"}));
    CHECK(listed[0]["file"] == certs.path("a.pem"));
    CHECK(listed[1]["names"] == nlohmann::json::array({"soon.test"}));
    CHECK(listed[2]["names"] == nlohmann::json::array({"cn.test"}));  // no SAN: the CN
    int64_t now = std::time(nullptr);
    for (const nlohmann::json& entry : listed) {
        int64_t left = entry["expires_in_seconds"].get<int64_t>();
        CHECK(std::abs(entry["not_after"].get<int64_t>() - now - left) <= 2);
    }
    // `soon` (10 days) ends within 10 days and not within 9; `a` (400) not within 399.
    int64_t soon_left = listed[1]["expires_in_seconds"].get<int64_t>();
    CHECK(expires_within(certs.path("soon.pem"), soon_left + 60));
    CHECK_FALSE(expires_within(certs.path("soon.pem"), soon_left - 60));
    CHECK(soon_left > 9 * 86400);
    CHECK(soon_left <= 10 * 86400);
    CHECK(listed[0]["expires_in_seconds"].get<int64_t>() > 399 * 86400);

    // A reload that leaves one certificate file: /stats says so.
    portico.rewrite_config(tls_config({certs.entry("rsa")}, metrics));
    portico.signal(SIGHUP);
    REQUIRE(portico.wait_for_log("reloaded"));
    nlohmann::json reloaded = stats_of(portico);
    REQUIRE(reloaded["tls"]["certificates"].size() == 1);
    CHECK(reloaded["tls"]["certificates"][0]["names"] == nlohmann::json::array({"rsa.test"}));
}

TEST_CASE("stats: no tls member without certificate files", "[metrics][tls]") {
    Portico portico(
        "[server]\nlisten = [\"{listen}\"]\nworkers = 1\n[metrics]\nlisten = \"127.0.0.1:0\"\n"
        "[[location]]\nprefix = \"/\"\nrespond = { status = 204 }\n");
    INFO(portico.log());
    nlohmann::json stats = stats_of(portico);
    CHECK_FALSE(stats.contains("tls"));
    CHECK(stats.contains("totals"));
}
