// The TLS counters and the access log's TLS fields on the real binary: full,
// resumed (a ticket, across two workers) and failed handshakes (plain HTTP,
// garbage, a client that leaves before its ClientHello) counted exactly in
// /metrics and /stats, the handshake histogram holding the completed ones,
// a reset zeroing them, and each request over TLS logged with its protocol
// and cipher while cleartext ones are not. The certificate is made here with
// `openssl req` (ECDSA P-256, self-signed, SAN DNS:localhost); the clients
// are `openssl s_client`.
#include <re2/re2.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "harness.hpp"
#include "metrics_support.hpp"
#include "skip.hpp"
#include "tls_support.hpp"
#include "upstream_server.hpp"

using namespace portico::test;
using nlohmann::json;

namespace {

struct ShellResult {
    int status = -1;
    std::string output;  // stdout and stderr
};

// Runs `command` with /bin/sh, its output into a file of `dir`.
ShellResult shell(const std::string& dir, const std::string& command) {
    std::string out = dir + "/shell.out";
    ShellResult result;
    result.status = std::system((command + " > " + out + " 2>&1").c_str());
    result.output = read_text(out);
    return result;
}

struct TlsSite {
    TempDir dir;
    TlsSite() {
        dir.write("www/index.html", "<p>over TLS or not</p>\n");
        ShellResult made =
            shell(dir.path(),
                  "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
                  "-keyout " +
                      dir.path() + "/key.pem -out " + dir.path() +
                      "/cert.pem -days 2 -subj /CN=localhost "
                      "-addext subjectAltName=DNS:localhost");
        INFO(made.output);
        REQUIRE(made.status == 0);
    }
    std::string access_log() const { return dir.path() + "/access.log"; }
    std::string config(const std::string& access_format) const {
        return R"(
[server]
listen = ["{listen}"]
workers = 2

[log]
access = ")" + access_log() +
               R"("
access_format = ")" +
               access_format + R"("

[metrics]
listen = "127.0.0.1:0"

[tls]
listen = ["127.0.0.1:0"]
certificates = [{ cert = ")" +
               dir.path() + R"(/cert.pem", key = ")" + dir.path() + R"(/key.pem" }]

[[location]]
name = "files"
prefix = "/"
root = ")" + dir.path() +
               R"(/www"
)";
    }
};

// What s_client said about the session it got.
struct Session {
    std::string kind;      // "New" or "Reused"
    std::string protocol;  // "TLSv1.3"
    std::string cipher;    // "TLS_AES_256_GCM_SHA384"
};

// One GET of `target` over TLS with `openssl s_client` (a new process, so
// a new connection and, without -sess_in, a full handshake). `options`: more
// s_client options (-sess_in, -sess_out, -tls1_2).
Session tls_get(const TlsSite& site, uint16_t port, const std::string& target,
                const std::string& options = "") {
    ShellResult run =
        shell(site.dir.path(),
              "printf 'GET " + target +
                  " HTTP/1.1\\r\\nHost: localhost\\r\\nConnection: close\\r\\n\\r\\n' | "
                  "timeout 10 openssl s_client -connect 127.0.0.1:" +
                  std::to_string(port) + " -servername localhost -CAfile " + site.dir.path() +
                  "/cert.pem -verify_return_error "
                  "-ign_eof " +
                  options);
    INFO(run.output);
    REQUIRE(run.status == 0);
    REQUIRE(run.output.find("HTTP/1.1 200 OK") != std::string::npos);
    // "New, TLSv1.3, Cipher is TLS_AES_256_GCM_SHA384" or "Reused, ...".
    Session session;
    REQUIRE(RE2::PartialMatch(run.output, R"((New|Reused), (TLSv1\.[23]), Cipher is (\S+))",
                              &session.kind, &session.protocol, &session.cipher));
    return session;
}

// The access log line of the request for `target`, once it is written.
std::string log_line_of(const TlsSite& site, const std::string& target) {
    std::string line;
    bool written = UpstreamServer::wait_until(
        [&] {
            std::istringstream in(read_text(site.access_log()));
            for (std::string each; std::getline(in, each);)
                if (each.find(target) != std::string::npos) {
                    line = each;
                    return true;
                }
            return false;
        },
        5s);
    INFO(target);
    REQUIRE(written);
    return line;
}

std::string stats_of(uint16_t metrics) {
    return scrape(metrics, "/stats");
}

}  // namespace

TEST_CASE("TLS handshakes are counted by result, with the time of the completed ones",
          "[metrics][tls]") {
    TlsSite site;
    Portico portico(site.config("combined"));
    REQUIRE(portico.wait_for_log("worker 1: started"));
    uint16_t port = tls_port(portico);
    uint16_t metrics = metrics_port(portico);
    std::string ticket = site.dir.path() + "/session";

    // Full handshakes: three TLS 1.3 (the first keeps its ticket), one TLS 1.2.
    std::vector<std::pair<std::string, Session>> over_tls;
    over_tls.emplace_back("/index.html?full=1",
                          tls_get(site, port, "/index.html?full=1", "-sess_out " + ticket));
    for (const char* target : {"/index.html?full=2", "/index.html?full=3"})
        over_tls.emplace_back(target, tls_get(site, port, target));
    over_tls.emplace_back("/index.html?full=tls12",
                          tls_get(site, port, "/index.html?full=tls12", "-tls1_2"));
    // Resumed: twice with the first one's ticket. Two workers share the
    // ticket keys, so whichever worker each lands on resumes it.
    for (const char* target : {"/index.html?resumed=1", "/index.html?resumed=2"})
        over_tls.emplace_back(target, tls_get(site, port, target, "-sess_in " + ticket));
    for (size_t i = 0; i < over_tls.size(); ++i) {
        INFO(over_tls[i].first);
        CHECK(over_tls[i].second.kind == (i < 4 ? "New" : "Reused"));
        CHECK(over_tls[i].second.protocol == (i == 3 ? "TLSv1.2" : "TLSv1.3"));
    }

    // Failed: plain HTTP on the TLS port (a clear-text 400), bytes that are
    // neither TLS nor HTTP, and a client that leaves before saying anything.
    {
        Client plain(port);
        plain.send("GET /index.html?plain HTTP/1.1\r\nHost: localhost\r\n\r\n");
        auto answer = plain.read_response();
        REQUIRE(answer);
        CHECK(answer->status == 400);
    }
    {
        Client garbage(port);
        garbage.send("\x01\x02\x03 not a ClientHello \xff\xfe\r\n\r\n" + std::string(64, '\x7f'));
        CHECK(garbage.closed_by_server());
    }
    { Client silent(port); }
    // And a cleartext request, which has no handshake.
    auto cleartext = fetch(portico.port(), "/index.html?cleartext=1");
    REQUIRE(cleartext);
    CHECK(cleartext->status == 200);

    // The silent client is counted when its worker sees the close.
    std::string text = scrape_when(metrics, "portico_tls_handshakes_total{result=\"failed\"}", 3);
    INFO(text);
    CHECK(sample(text, "portico_tls_handshakes_total{result=\"full\"}") == 4);
    CHECK(sample(text, "portico_tls_handshakes_total{result=\"resumed\"}") == 2);
    CHECK(sample(text, "portico_tls_handshakes_total{result=\"failed\"}") == 3);
    // Completed handshakes only: full + resumed.
    CHECK(sample(text, "portico_tls_handshake_seconds_count") == 6);
    CHECK(sample(text, "portico_tls_handshake_seconds_bucket{le=\"+Inf\"}") == 6);
    double seconds = sample(text, "portico_tls_handshake_seconds_sum");
    CHECK(seconds > 0);
    CHECK(seconds < 6 * 10.0);  // each within handshake_timeout
    CHECK(sample(text, "portico_connections_accepted_total") == 10);

    json stats = json::parse(stats_of(metrics));
    const json& totals = stats["totals"];
    CHECK(totals["tls_handshakes"] == json({{"full", 4}, {"resumed", 2}, {"failed", 3}}));
    CHECK(totals["tls_handshake_time"]["count"] == 6);
    CHECK(totals["tls_handshake_time"]["p50"].get<double>() > 0);
    CHECK(totals["tls_handshake_time"]["max"].get<double>() >=
          totals["tls_handshake_time"]["p99"].get<double>());
    // Per worker slot, adding up to the totals.
    json summed = {{"full", 0}, {"resumed", 0}, {"failed", 0}};
    for (const json& worker : stats["workers"])
        for (const char* result : {"full", "resumed", "failed"})
            summed[result] =
                summed[result].get<uint64_t>() + worker["tls_handshakes"][result].get<uint64_t>();
    CHECK(summed == totals["tls_handshakes"]);

    // Without promtool the rest still runs, and the test then reports
    // itself skipped, naming the one check it could not make.
    const bool promtool = std::system("command -v promtool >/dev/null 2>&1") == 0;
    if (promtool) {
        std::string path = site.dir.write("metrics.txt", text);
        ShellResult check = shell(site.dir.path(), "promtool check metrics < " + path);
        INFO(check.output);
        CHECK(check.status == 0);
    }

    // The access log: protocol and cipher over TLS, "-" over cleartext.
    for (const auto& [target, session] : over_tls) {
        std::string line = log_line_of(site, target);
        INFO(line);
        // Then the request id (rid=, 32 hex characters) and refused=-.
        std::string field = " tls=" + session.protocol + "/" + session.cipher + " rid=";
        size_t end = line.size() - std::string_view(" refused=-").size();
        REQUIRE(line.size() > field.size() + 32 + 10);
        CHECK(line.compare(end - field.size() - 32, field.size(), field) == 0);
    }
    std::string plain_line = log_line_of(site, "/index.html?cleartext=1");
    INFO(plain_line);
    REQUIRE(plain_line.size() > 53);
    CHECK(plain_line.compare(plain_line.size() - 53, 11, " tls=- rid=") == 0);

    // A reset zeroes the counts and the histogram; the next handshake counts from 0.
    Client reset(metrics);
    reset.send("POST /stats/reset HTTP/1.1\r\nHost: m\r\n\r\n");
    auto answer = reset.read_response();
    REQUIRE(answer);
    REQUIRE(answer->status == 204);
    text = scrape(metrics);
    for (const char* result : {"full", "resumed", "failed"})
        CHECK(sample(text,
                     std::string("portico_tls_handshakes_total{result=\"") + result + "\"}") == 0);
    CHECK(sample(text, "portico_tls_handshake_seconds_count") == 0);
    tls_get(site, port, "/index.html?after-reset=1");
    text = scrape_when(metrics, "portico_tls_handshakes_total{result=\"full\"}", 1);
    CHECK(sample(text, "portico_tls_handshakes_total{result=\"full\"}") == 1);
    CHECK(sample(text, "portico_tls_handshakes_total{result=\"failed\"}") == 0);
    CHECK(sample(text, "portico_tls_handshake_seconds_count") == 1);
    if (!promtool)
        PORTICO_SKIP(
            "promtool not installed (Debian package prometheus): /metrics over TLS "
            "not checked with promtool check metrics (every other check ran)");
}

TEST_CASE("the json access log has tls_protocol and tls_cipher, null over cleartext",
          "[access-log][tls]") {
    TlsSite site;
    Portico portico(site.config("json"));
    Session session = tls_get(site, tls_port(portico), "/index.html?json=tls");
    auto cleartext = fetch(portico.port(), "/index.html?json=cleartext");
    REQUIRE(cleartext);

    json over_tls = json::parse(log_line_of(site, "/index.html?json=tls"));
    CHECK(over_tls["tls_protocol"] == session.protocol);
    CHECK(over_tls["tls_cipher"] == session.cipher);
    CHECK(over_tls["status"] == 200);
    json plain = json::parse(log_line_of(site, "/index.html?json=cleartext"));
    CHECK(plain["tls_protocol"].is_null());
    CHECK(plain["tls_cipher"].is_null());
}
