// OCSP stapling with real parts: a CA of the test's own whose leaves name
// an OCSP responder on loopback (Authority Information Access), OpenSSL's
// own responder (`openssl ocsp -index`) answering for them, and `openssl
// s_client -status` as the client that asks for the staple. The responder
// down, answering garbage, or giving a short validity: the handshakes go on,
// without a staple or with a fresh one.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <ctime>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

#include "acme_support.hpp"
#include "skip.hpp"
#include "metrics_support.hpp"
#include "tls_support.hpp"
#include "upstream_server.hpp"

using namespace portico::test;

namespace {

// In a temp folder: ca.pem/ca.key, and leaves good.test and revoked.test
// (good.pem, revoked.pem: the leaf then the CA) naming `responder` as their
// OCSP responder, plain.test naming none; index.txt, the responder's
// database, says good.test and plain.test are valid and revoked.test revoked.
const char* pki_script = R"SH(set -e
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem \
  -days 30 -subj /CN=portico-ocsp-test-ca -addext basicConstraints=critical,CA:TRUE \
  -addext keyUsage=critical,keyCertSign,cRLSign,digitalSignature 2>/dev/null
leaf() {
  printf 'subjectAltName=DNS:%s.test\n' "$1" > $1.ext
  [ -n "$2" ] && printf 'authorityInfoAccess=OCSP;URI:%s\n' "$2" >> $1.ext
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout $1.key -out $1.csr \
    -subj /CN=$1.test 2>/dev/null
  openssl x509 -req -in $1.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 30 \
    -extfile $1.ext -out $1.crt 2>/dev/null
  cat $1.crt ca.pem > $1.pem
}
entry() {  # status, revocation date, leaf
  expiry=$(date -u -d "$(openssl x509 -in $3.crt -noout -enddate | cut -d= -f2)" +%y%m%d%H%M%SZ)
  serial=$(openssl x509 -in $3.crt -noout -serial | cut -d= -f2)
  printf '%s\t%s\t%s\t%s\tunknown\t/CN=%s.test\n' "$1" "$expiry" "$2" "$serial" "$3" >> index.txt
}
leaf good "$RESPONDER"
leaf revoked "$RESPONDER"
leaf plain ""
: > index.txt
entry V "" good
entry V "" plain
entry R "$(date -u +%y%m%d%H%M%SZ)" revoked
)SH";

class Pki {
public:
    // `responder`: the URL the leaves name ("http://127.0.0.1:PORT").
    explicit Pki(const std::string& responder) {
        dir_.write("make.sh", pki_script);
        CommandResult made =
            run_shell("cd " + dir_.path() + " && RESPONDER='" + responder + "' sh make.sh");
        if (made.exit_code != 0)
            throw std::runtime_error("making the test PKI failed:\n" + made.output);
    }
    std::string path(const std::string& name) const { return dir_.path() + "/" + name; }
    std::string entry(const std::string& name) const {
        return "{ cert = \"" + path(name + ".pem") + "\", key = \"" + path(name + ".key") + "\" }";
    }

private:
    TempDir dir_;
};

// `openssl ocsp` answering from `index` on `port` (OpenSSL 3.0 takes no
// address: it listens on every interface), signing as `signer` (the
// issuer); `validity`: its -ndays/-nmin arguments.
class Responder {
public:
    Responder(const std::string& index, const std::string& signer, const std::string& signer_key,
              uint16_t port, std::vector<std::string> validity = {"-ndays", "1"}) {
        std::vector<std::string> arguments = {
            "openssl", "ocsp",  "-index",   index, "-port", std::to_string(port), "-rsigner",
            signer,    "-rkey", signer_key, "-CA", signer,  "-ignore_err"};
        arguments.insert(arguments.end(), validity.begin(), validity.end());
        child_ = std::make_unique<Child>(arguments, dir_.path(), dir_.path() + "/ocsp.log");
        // Ready once it says so (a probe connection would hold it: it
        // serves one connection at a time).
        auto deadline = std::chrono::steady_clock::now() + 5s;
        while (!contains(log(), "waiting for OCSP client connections")) {
            if (std::chrono::steady_clock::now() > deadline)
                throw std::runtime_error("openssl ocsp did not start:\n" + log());
            std::this_thread::sleep_for(20ms);
        }
    }
    // For the Pki's CA.
    Responder(const Pki& pki, uint16_t port, std::vector<std::string> validity = {"-ndays", "1"})
        : Responder(pki.path("index.txt"), pki.path("ca.pem"), pki.path("ca.key"), port,
                    std::move(validity)) {}
    // One "Received request" line per request.
    std::string log() const { return read_text(dir_.path() + "/ocsp.log"); }

private:
    TempDir dir_;
    std::unique_ptr<Child> child_;
};

std::string responder_url(uint16_t port) {
    return "http://127.0.0.1:" + std::to_string(port);
}

// [tls] with `certificates`, a [metrics] listener, and "/" answering "served\n".
std::string stapling_config(const std::vector<std::string>& certificates,
                            const std::string& tls_options = "") {
    return tls_config(certificates, R"(
[metrics]
listen = "127.0.0.1:0"

[[location]]
prefix = "/"
respond = { status = 200, body = "served\n" }
)",
                      tls_options);
}

// What `openssl s_client -status` prints for a handshake naming `name`,
// offering `alpn`; for http/1.1 with a GET / sent after it (its response
// included).
std::string s_client(uint16_t port, const std::string& name, const std::string& alpn = "http/1.1") {
    bool h2 = alpn == "h2";
    std::string request =
        h2 ? "" : "GET / HTTP/1.1\\r\\nHost: " + name + "\\r\\nConnection: close\\r\\n\\r\\n";
    return run_shell("printf '" + request + "' | timeout 5 openssl s_client -connect 127.0.0.1:" +
                     std::to_string(port) + " -servername " + name + " -alpn " + alpn + " -status" +
                     (h2 ? "" : " -ign_eof") + " 2>&1")
        .output;
}

// The "This Update" line of a stapled response, "" without a staple.
std::string this_update(const std::string& output) {
    size_t at = output.find("This Update: ");
    return at == std::string::npos ? "" : output.substr(at, output.find('\n', at) - at);
}

const char* no_staple = "OCSP response: no response sent";

// The entry of /stats' "ocsp" certificates for `file`.
nlohmann::json staple_stats(const Portico& portico, const std::string& file) {
    nlohmann::json stats = nlohmann::json::parse(scrape(metrics_port(portico), "/stats"));
    REQUIRE(stats.contains("ocsp"));
    for (const nlohmann::json& entry : stats["ocsp"]["certificates"])
        if (entry["file"] == file) return entry;
    FAIL("no /stats entry for " << file << " in " << stats["ocsp"].dump());
    return {};
}

}  // namespace

TEST_CASE(
    "ocsp: the issuer's response is stapled when the client asks: good, revoked as it is, "
    "over HTTP/1.1 and h2",
    "[tls][ocsp]") {
    uint16_t responder_port = free_port();
    Pki pki(responder_url(responder_port));
    Responder responder(pki, responder_port);
    Portico portico(stapling_config({pki.entry("good"), pki.entry("revoked"), pki.entry("plain")}));
    REQUIRE(portico.wait_for_log("ocsp: " + pki.path("good.pem") + ": stapling a \"good\""));
    REQUIRE(portico.wait_for_log("ocsp: " + pki.path("revoked.pem") + ": stapling a \"revoked\""));
    uint16_t port = tls_port(portico);

    std::string good = s_client(port, "good.test");
    CHECK(contains(good, "OCSP Response Status: successful"));
    CHECK(contains(good, "Cert Status: good"));
    CHECK(contains(good, "served"));
    std::string h2 = s_client(port, "good.test", "h2");
    CHECK(contains(h2, "ALPN protocol: h2"));
    CHECK(contains(h2, "Cert Status: good"));

    // The truth, stapled: a client that checks it refuses the certificate.
    std::string revoked = s_client(port, "revoked.test");
    CHECK(contains(revoked, "OCSP Response Status: successful"));
    CHECK(contains(revoked, "Cert Status: revoked"));

    // No responder in the certificate: no staple, no fetch, said once.
    std::string plain = s_client(port, "plain.test");
    CHECK(contains(plain, no_staple));
    CHECK(contains(plain, "served"));
    CHECK(
        contains(portico.log(), "plain.pem: not stapled: the certificate names no OCSP responder"));

    nlohmann::json state = staple_stats(portico, pki.path("good.pem"));
    CHECK(state["names"] == nlohmann::json::array({"good.test"}));
    CHECK(state["ocsp_status"] == "good");
    int64_t now = std::time(nullptr);
    CHECK(state["ocsp_this_update"].get<int64_t>() <= now + 1);
    CHECK(state["ocsp_next_update"].get<int64_t>() > now + 3600);
    CHECK(state["ocsp_next_fetch"].get<int64_t>() > now);
    CHECK(state["ocsp_last_error"] == "");
    CHECK(staple_stats(portico, pki.path("revoked.pem"))["ocsp_status"] == "revoked");
    CHECK(staple_stats(portico, pki.path("plain.pem"))["ocsp_last_error"] ==
          "the certificate names no OCSP responder");
}

TEST_CASE(
    "ocsp: a responder down at start: handshakes without a staple, logged once, stapled "
    "once it answers",
    "[tls][ocsp]") {
    uint16_t responder_port = free_port();
    Pki pki(responder_url(responder_port));
    Portico portico(stapling_config({pki.entry("good")}));
    const std::string failure = "ocsp: " + pki.path("good.pem") + ": cannot fetch from";
    REQUIRE(portico.wait_for_log(failure));
    uint16_t port = tls_port(portico);
    std::string output = s_client(port, "good.test");
    CHECK(contains(output, no_staple));
    CHECK(contains(output, "served"));
    CHECK(
        contains(staple_stats(portico, pki.path("good.pem"))["ocsp_last_error"].get<std::string>(),
                 "cannot fetch from"));
    // Retried 2 s later, failing the same way: not logged again.
    std::this_thread::sleep_for(2500ms);
    CHECK_FALSE(portico.wait_for_log(failure, 2, 10ms));

    Responder responder(pki, responder_port);
    REQUIRE(portico.wait_for_log("stapling a \"good\" response", 1, 8s));
    CHECK(contains(s_client(port, "good.test"), "Cert Status: good"));
}

TEST_CASE("ocsp: a responder answering garbage: no staple, the handshake goes on, logged once",
          "[tls][ocsp]") {
    UpstreamServer garbage([](const ReceivedRequest&) {
        return Reply::text(200, "not an OCSP response",
                           "Content-Type: application/ocsp-response\r\n");
    });
    Pki pki(responder_url(garbage.port()));
    Portico portico(stapling_config({pki.entry("good")}));
    const std::string failure = "the responder's answer is not an OCSP response";
    REQUIRE(portico.wait_for_log(failure));
    std::string output = s_client(tls_port(portico), "good.test");
    CHECK(contains(output, no_staple));
    CHECK(contains(output, "served"));
    // The request as RFC 6960 A.1 says: a POST of the DER request.
    ReceivedRequest request = garbage.requests().at(0);
    CHECK(request.method == "POST");
    CHECK(request.header("content-type") == "application/ocsp-request");
    CHECK_FALSE(request.body.empty());
    // A second attempt, 2 s later, not logged again.
    auto deadline = std::chrono::steady_clock::now() + 5s;
    while (garbage.request_count() < 2 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(100ms);
    CHECK(garbage.request_count() >= 2);
    CHECK_FALSE(portico.wait_for_log(failure, 2, 10ms));
}

TEST_CASE("ocsp: a response with a short validity is fetched again before it expires",
          "[tls][ocsp]") {
    uint16_t responder_port = free_port();
    Pki pki(responder_url(responder_port));
    // nextUpdate a minute after thisUpdate: fetched again 10 s later (the
    // earliest portico fetches again), not at half the minute.
    Responder responder(pki, responder_port, {"-nmin", "1"});
    Portico portico(stapling_config({pki.entry("good")}));
    REQUIRE(portico.wait_for_log("stapling a \"good\" response"));
    uint16_t port = tls_port(portico);
    std::string first = this_update(s_client(port, "good.test"));
    REQUIRE_FALSE(first.empty());
    std::string later = first;
    auto deadline = std::chrono::steady_clock::now() + 14s;
    while (later == first && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(500ms);
        later = this_update(s_client(port, "good.test"));
    }
    CHECK_FALSE(later.empty());
    CHECK(later != first);
    std::string requests = responder.log();
    size_t count = 0;
    for (size_t at = 0; (at = requests.find("Received request", at)) != std::string::npos; ++at)
        ++count;
    CHECK(count == 2);
}

TEST_CASE(
    "ocsp: ocsp_stapling = false staples nothing and fetches nothing, and ocsp_responder "
    "replaces the certificate's responder",
    "[tls][ocsp]") {
    uint16_t responder_port = free_port();
    Pki pki(responder_url(responder_port));
    Responder responder(pki, responder_port);
    {
        Portico off(stapling_config({pki.entry("good")}, "ocsp_stapling = false\n"));
        std::string output = s_client(tls_port(off), "good.test");
        CHECK(contains(output, no_staple));
        CHECK(contains(output, "served"));
        CHECK_FALSE(contains(off.log(), "ocsp:"));
        CHECK_FALSE(contains(off.log(), "started the ACME process"));
    }
    // plain.test names no responder: the configured one answers for it.
    Portico replaced(stapling_config(
        {pki.entry("plain")}, "ocsp_responder = \"" + responder_url(responder_port) + "/\"\n"));
    REQUIRE(replaced.wait_for_log("stapling a \"good\" response"));
    CHECK(contains(s_client(tls_port(replaced), "plain.test"), "Cert Status: good"));
}

TEST_CASE("ocsp: an ACME site's certificate gets its response stapled once it arrives",
          "[acme][ocsp]") {
    if (!pebble_installed())
        PORTICO_SKIP("pebble is not installed (deploy/install-deps.sh --test)");
    Certificates certs;
    TempDir storage;
    uint16_t http_port = free_port();
    uint16_t responder_port = free_port();
    Pebble pebble({.http_port = http_port, .ocsp_responder = responder_url(responder_port)});
    Portico portico(acme_config(http_port, certs.entry("a"), pebble.directory(), pebble.api_root(),
                                storage.path()));
    REQUIRE(portico.wait_for_log("new certificate for a.acme.test", 1, 20s));
    // Followed at once: the responder is not up yet.
    REQUIRE(portico.wait_for_log("ocsp: a.acme.test: cannot fetch from"));
    uint16_t port = tls_port(portico);
    CHECK(contains(s_client(port, "a.acme.test"), no_staple));

    // A responder for pebble's intermediate, knowing the new certificate.
    TempDir responder_dir;
    CommandResult indexed = run_shell(
        "cd " + responder_dir.path() + " && crt=" + storage.path() +
        "/a.acme.test.crt && expiry=$(date -u -d \"$(openssl x509 -in $crt -noout -enddate | cut "
        "-d= -f2)\" +%y%m%d%H%M%SZ) && serial=$(openssl x509 -in $crt -noout -serial | cut -d= "
        "-f2) && printf 'V\\t%s\\t\\t%s\\tunknown\\t/CN=a.acme.test\\n' $expiry $serial > "
        "index.txt");
    REQUIRE(indexed.exit_code == 0);
    Responder responder(responder_dir.path() + "/index.txt", pebble.intermediate(),
                        pebble.intermediate_key(), responder_port);
    REQUIRE(portico.wait_for_log("ocsp: a.acme.test: stapling a \"good\" response", 1, 10s));
    CHECK(contains(s_client(port, "a.acme.test"), "Cert Status: good"));
    nlohmann::json stats = nlohmann::json::parse(scrape(metrics_port(portico), "/stats"));
    nlohmann::json site = stats["acme"]["certificates"][0];
    CHECK(site["ocsp_status"] == "good");
    CHECK(site["ocsp_last_error"] == "");
    CHECK(site["ocsp_next_update"].get<int64_t>() > std::time(nullptr));
}
