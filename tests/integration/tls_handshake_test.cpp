// The TLS handshake on the real binary: which certificate SNI picks, ALPN,
// the protocol versions and cipher suites refused, and session resumption
// by tickets whose keys every worker shares.
#include <openssl/x509_vfy.h>
#include <signal.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <set>
#include <sstream>

#include "tls_support.hpp"
#include "upstream_server.hpp"

using namespace portico::test;

namespace {

const std::string respond_fine = R"(
[[location]]
prefix = "/"
respond = { status = 200, body = "fine\n" }
)";

const std::string plain_get = "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n";

// Connects with `options`, checks the connection serves a request, and
// returns the certificate's subject and names as "SUBJECT|NAMES".
std::string served_certificate(uint16_t port, const TlsOptions& options) {
    TlsClient client(port, options);
    REQUIRE(client.handshake());
    REQUIRE(client.send(plain_get));
    ResponseReader reader(client);
    auto response = reader.read();
    REQUIRE(response);
    CHECK(response->body == "fine\n");
    return client.peer_subject() + "|" + client.peer_names();
}

TlsOptions with_name(const std::string& name) {
    TlsOptions options;
    options.server_name = name;
    return options;
}

const std::string cert_a = "CN=a.test|DNS:a.test,DNS:www.a.test";
const std::string cert_wild = "CN=wildcard|DNS:*.x.test";
const std::string cert_cn = "CN=cn.test|";
const std::string cert_rsa = "CN=rsa.test|DNS:rsa.test";

}  // namespace

TEST_CASE("tls: SNI picks the certificate by SAN, wildcard for one label, or CN, else the first",
          "[tls]") {
    Certificates certs;
    Portico portico(
        tls_config({certs.entry("a"), certs.entry("wild"), certs.entry("cn"), certs.entry("rsa")},
                   respond_fine));
    uint16_t port = tls_port(portico);

    const std::vector<std::pair<std::string, std::string>> cases = {
        {"a.test", cert_a},      {"www.a.test", cert_a},
        {"WWW.A.Test", cert_a},                           // names are case-insensitive
        {"b.x.test", cert_wild}, {"a.b.x.test", cert_a},  // "*.x.test" covers one label only
        {"x.test", cert_a},                               // ...and not the bare domain
        {"cn.test", cert_cn},                             // no SAN: the CN names it
        {"rsa.test", cert_rsa},  {"unknown.test", cert_a},
    };
    for (const auto& [name, expected] : cases) {
        INFO("SNI " << name);
        CHECK(served_certificate(port, with_name(name)) == expected);
    }
    INFO("no SNI");
    CHECK(served_certificate(port, {}) == cert_a);

    // What a browser checks: the chain to our CA and the name.
    for (const char* name : {"a.test", "www.a.test", "b.x.test", "cn.test", "rsa.test"}) {
        INFO("verified as " << name);
        TlsOptions options = with_name(name);
        options.ca_file = certs.ca();
        TlsClient client(port, options);
        REQUIRE(client.handshake());
        CHECK(client.verify_result() == X509_V_OK);
    }
    // curl, as a user would check it by hand.
    CommandResult curl = run_shell("curl -sS --cacert " + certs.ca() +
                                   " --resolve www.a.test:" + std::to_string(port) +
                                   ":127.0.0.1 https://www.a.test:" + std::to_string(port) + "/");
    INFO(curl.output);
    CHECK(curl.exit_code == 0);
    CHECK(curl.output == "fine\n");
}

TEST_CASE("tls: the default certificate is the first listed, whichever it is", "[tls]") {
    Certificates certs;
    Portico portico(tls_config({certs.entry("cn"), certs.entry("a")}, respond_fine));
    uint16_t port = tls_port(portico);
    CHECK(served_certificate(port, {}) == cert_cn);
    CHECK(served_certificate(port, with_name("nowhere.test")) == cert_cn);
    CHECK(served_certificate(port, with_name("a.test")) == cert_a);
}

TEST_CASE("tls: ALPN selects h2 first, http/1.1 otherwise, and without [http2] a client offering "
          "only h2 goes on without ALPN",
          "[tls]") {
    Certificates certs;
    bool http2 = GENERATE(true, false);
    INFO("[http2] enabled = " << http2);
    Portico portico(tls_config({certs.entry("a")}, respond_fine + (http2 ? "" : "\n[http2]\nenabled = false\n")));
    uint16_t port = tls_port(portico);
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{"h2", "http/1.1"}, http2 ? "h2" : "http/1.1"},
        {{"http/1.1", "h2"}, http2 ? "h2" : "http/1.1"},  // the server's preference wins
        {{"http/1.1"}, "http/1.1"},
        {{"h2"}, http2 ? "h2" : ""},
        {{}, ""},
    };
    for (const auto& [offered, selected] : cases) {
        INFO("offered " << offered.size() << " protocol(s), first "
                        << (offered.empty() ? "-" : offered[0]));
        TlsOptions options = with_name("a.test");
        options.alpn = offered;
        TlsClient client(port, options);
        REQUIRE(client.handshake());
        CHECK(client.alpn() == selected);
        if (selected == "h2") continue;  // HTTP/2 itself: tests/integration/http2_*
        REQUIRE(client.send(plain_get));
        ResponseReader reader(client);
        auto response = reader.read();
        REQUIRE(response);
        CHECK(response->status == 200);
        CHECK(response->body == "fine\n");
    }
}

TEST_CASE("tls: TLS 1.2 and 1.3 are served, 1.0/1.1 and weak cipher suites fail the handshake",
          "[tls]") {
    Certificates certs;
    Portico portico(tls_config({certs.entry("a"), certs.entry("rsa")}, respond_fine));
    uint16_t port = tls_port(portico);

    for (int version : {TLS1_2_VERSION, TLS1_3_VERSION}) {
        for (const char* name : {"a.test", "rsa.test"}) {
            TlsOptions options = with_name(name);
            options.min_version = options.max_version = version;
            TlsClient client(port, options);
            REQUIRE(client.handshake());
            INFO(name << " " << client.version() << " " << client.cipher());
            CHECK(client.version() == (version == TLS1_2_VERSION ? "TLSv1.2" : "TLSv1.3"));
            REQUIRE(client.send(plain_get));
            ResponseReader reader(client);
            auto response = reader.read();
            REQUIRE(response);
            CHECK(response->body == "fine\n");
        }
    }

    // A real OpenSSL client allowed only TLS 1.0 and 1.1: the server says
    // "protocol version".
    {
        TlsOptions options = with_name("a.test");
        options.min_version = TLS1_VERSION;
        options.max_version = TLS1_1_VERSION;
        options.security_level = 0;
        options.ciphers = "DEFAULT:@SECLEVEL=0";
        TlsClient client(port, options);
        REQUIRE(client.offered_ciphers() > 0);
        CHECK_FALSE(client.handshake());
        INFO(client.error());
        CHECK(client.error().find("alert protocol version") != std::string::npos);
    }

    // TLS 1.2 offering only suites the policy leaves out: no authentication,
    // no encryption, RSA key exchange (no forward secrecy), CBC with SHA-1.
    for (const char* weak : {"aNULL", "eNULL", "kRSA", "ECDHE+AES+SHA1"}) {
        for (const char* name : {"a.test", "rsa.test"}) {
            INFO(weak << " to " << name);
            TlsOptions options = with_name(name);
            options.max_version = TLS1_2_VERSION;
            options.security_level = 0;
            options.ciphers = std::string(weak) + ":@SECLEVEL=0";
            TlsClient client(port, options);
            REQUIRE(client.offered_ciphers() > 0);  // the offer is made, and refused
            CHECK_FALSE(client.handshake());
            INFO(client.error());
            CHECK(client.error().find("alert handshake failure") != std::string::npos);
        }
    }

    // What this OpenSSL cannot even offer (RC4, 3DES, export, DES), and the
    // old versions again, as a scanner sends them: a hand-made ClientHello.
    struct RawHello {
        const char* what;
        uint16_t version;
        std::vector<uint16_t> suites;
        int alert;  // 0: handshake_failure or protocol_version
    };
    const std::vector<RawHello> hellos = {
        {"RC4 only", 0x0303, {0x0005, 0x0004, 0xc011, 0xc007}, alert_handshake_failure},
        {"3DES only", 0x0303, {0x000a, 0xc012, 0xc008}, alert_handshake_failure},
        {"export and DES only", 0x0303, {0x0003, 0x0006, 0x0008, 0x0009}, alert_handshake_failure},
        {"NULL only", 0x0303, {0x0000, 0x0001, 0x0002, 0x003b}, alert_handshake_failure},
        {"TLS 1.0", 0x0301, {0xc009, 0xc013, 0x002f}, alert_protocol_version},
        {"TLS 1.1", 0x0302, {0xc009, 0xc013, 0x002f}, alert_protocol_version},
        // OpenSSL has no SSL 3.0 at all: either alert will do.
        {"SSL 3.0", 0x0300, {0x002f, 0x000a}, 0},
    };
    for (const RawHello& hello : hellos) {
        INFO(hello.what);
        Client raw(port);
        raw.send(client_hello(hello.version, hello.suites, "a.test"));
        auto answer = raw.read_until_close(3s);
        REQUIRE(answer);
        int alert = alert_description(*answer);
        if (hello.alert)
            CHECK(alert == hello.alert);
        else
            CHECK((alert == alert_handshake_failure || alert == alert_protocol_version));
    }
    // The same hello with one suite of the policy is served: the refusals
    // above are the suites' and versions', not the hand-made hello's.
    {
        Client raw(port);
        raw.send(client_hello(0x0303, {0x0005, 0x000a, 0xc02b}, "a.test"));
        ResponseReader reader(raw.fd());
        REQUIRE(reader.read_at_least(6, 3s));
        CHECK(reader.buffered()[0] == '\x16');  // a handshake record: the ServerHello
        CHECK(reader.buffered()[5] == '\x02');
    }
    CHECK(log_lines_above_info(portico.log()).empty());
}

TEST_CASE("tls: protocols = TLSv1.3 alone refuses TLS 1.2, TLSv1.2 alone refuses 1.3", "[tls]") {
    Certificates certs;
    for (const char* only : {"TLSv1.3", "TLSv1.2"}) {
        INFO("protocols = [" << only << "]");
        Portico portico(tls_config({certs.entry("a")}, respond_fine,
                                   "protocols = [\"" + std::string(only) + "\"]\n"));
        uint16_t port = tls_port(portico);
        bool tls13 = std::string(only) == "TLSv1.3";
        {
            TlsOptions options = with_name("a.test");
            options.min_version = options.max_version = tls13 ? TLS1_2_VERSION : TLS1_3_VERSION;
            TlsClient client(port, options);
            CHECK_FALSE(client.handshake());
            INFO(client.error());
            CHECK(client.error().find("alert protocol version") != std::string::npos);
        }
        TlsClient client(port, with_name("a.test"));  // offers both
        REQUIRE(client.handshake());
        CHECK(client.version() == only);
        REQUIRE(client.send(plain_get));
        ResponseReader reader(client);
        auto response = reader.read();
        REQUIRE(response);
        CHECK(response->body == "fine\n");
    }
}

TEST_CASE("tls: a ciphers list is the TLS 1.2 policy", "[tls]") {
    Certificates certs;
    Portico portico(tls_config({certs.entry("a")}, respond_fine,
                               "ciphers = \"ECDHE-ECDSA-CHACHA20-POLY1305\"\n"));
    uint16_t port = tls_port(portico);
    TlsOptions options = with_name("a.test");
    options.max_version = TLS1_2_VERSION;
    {
        TlsClient client(port, options);
        REQUIRE(client.handshake());
        CHECK(client.cipher() == "ECDHE-ECDSA-CHACHA20-POLY1305");
    }
    // A suite of the default list, no longer in this one.
    options.ciphers = "ECDHE-ECDSA-AES128-GCM-SHA256";
    TlsClient client(port, options);
    CHECK_FALSE(client.handshake());
    INFO(client.error());
    CHECK(client.error().find("alert handshake failure") != std::string::npos);
}

TEST_CASE("tls: the server's cipher order decides, except for a client preferring ChaCha20",
          "[tls]") {
    // What testssl.sh rates HIGH when missing ("NOT a cipher order
    // configured"): the same offer in any order gets the same suite.
    Certificates certs;
    Portico portico(tls_config({certs.entry("a")}, respond_fine));
    uint16_t port = tls_port(portico);
    auto chosen = [&](int version, const std::string& offer) {
        TlsOptions options = with_name("a.test");
        options.min_version = options.max_version = version;
        if (version == TLS1_3_VERSION)
            options.ciphersuites = offer;
        else
            options.ciphers = offer;
        TlsClient client(port, options);
        REQUIRE(client.handshake());
        return client.cipher();
    };
    // TLS 1.2: the first of Mozilla's intermediate list.
    CHECK(chosen(TLS1_2_VERSION, "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-AES128-GCM-SHA256") ==
          "ECDHE-ECDSA-AES128-GCM-SHA256");
    CHECK(chosen(TLS1_2_VERSION, "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384") ==
          "ECDHE-ECDSA-AES128-GCM-SHA256");
    // A client that puts ChaCha20 first (no AES hardware) gets it.
    CHECK(chosen(TLS1_2_VERSION, "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-ECDSA-AES128-GCM-SHA256") ==
          "ECDHE-ECDSA-CHACHA20-POLY1305");
    // TLS 1.3: OpenSSL's own order, whatever the client's.
    std::string forward = chosen(TLS1_3_VERSION, "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384");
    std::string reverse = chosen(TLS1_3_VERSION, "TLS_AES_256_GCM_SHA384:TLS_AES_128_GCM_SHA256");
    CHECK(forward == reverse);
    CHECK(chosen(TLS1_3_VERSION, "TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256") ==
          "TLS_CHACHA20_POLY1305_SHA256");
}

namespace {

// GET / on a connection resuming `session` (nullptr: a full handshake);
// whether it was resumed, and the session to resume next (the caller frees).
struct Visit {
    bool reused = false;
    SSL_SESSION* next = nullptr;
};

Visit visit(uint16_t port, int version, SSL_SESSION* session) {
    TlsOptions options = with_name("a.test");
    options.min_version = options.max_version = version;
    options.session = session;
    TlsClient client(port, options);
    Visit result;
    REQUIRE(client.handshake());
    result.reused = client.reused();
    // The response is read before the session is taken: a TLS 1.3 ticket
    // comes after the handshake.
    REQUIRE(client.send(plain_get));
    ResponseReader reader(client);
    auto response = reader.read();
    REQUIRE(response);
    CHECK(response->body == "fine\n");
    result.next = client.take_session();
    return result;
}

// The worker number of each access log line ("w=N").
std::vector<int> workers_in(const std::string& access_log) {
    std::vector<int> workers;
    std::istringstream lines(access_log);
    std::string line;
    while (std::getline(lines, line)) {
        size_t at = line.rfind(" w=");
        if (at != std::string::npos) workers.push_back(std::stoi(line.substr(at + 3)));
    }
    return workers;
}

}  // namespace

TEST_CASE("tls: session tickets resume on every worker, TLS 1.3 and 1.2, and across a reload",
          "[tls][resumption]") {
    Certificates certs;
    TempDir logs;
    const std::string access = logs.path() + "/access.log";
    auto config = [&](const std::string& body) {
        return tls_config({certs.entry("a")},
                          "[log]\naccess = \"" + access +
                              "\"\n\n[[location]]\nprefix = \"/\"\n"
                              "respond = { status = 200, body = \"" +
                              body + "\" }\n",
                          "", "workers = 2\n");
    };
    Portico portico(config("fine\\n"));
    REQUIRE(portico.wait_for_log("worker 1: started"));
    uint16_t port = tls_port(portico);

    // SO_REUSEPORT spreads connections by their address hash: 16 resumed
    // connections all on one worker would be a 1 in 32,000 chance.
    const int reconnects = 16;
    for (int version : {TLS1_3_VERSION, TLS1_2_VERSION}) {
        INFO((version == TLS1_3_VERSION ? "TLS 1.3" : "TLS 1.2"));
        Visit first = visit(port, version, nullptr);
        CHECK_FALSE(first.reused);
        REQUIRE(first.next);
        SSL_SESSION* session = first.next;
        int reused = 0;
        for (int i = 0; i < reconnects; ++i) {
            Visit again = visit(port, version, session);
            if (again.reused) ++reused;
            SSL_SESSION_free(session);
            session = again.next;
        }
        CHECK(reused == reconnects);

        // The master keeps the keys across a reload: the new workers resume
        // what the old ones issued.
        portico.rewrite_config(config("fine\\n"));
        int reloads = version == TLS1_3_VERSION ? 1 : 2;
        portico.signal(SIGHUP);
        // Once both old workers stopped accepting, only new ones answer.
        REQUIRE(portico.wait_for_log("draining:", 2 * reloads));
        Visit after_reload = visit(port, version, session);
        CHECK(after_reload.reused);
        SSL_SESSION_free(session);
        SSL_SESSION_free(after_reload.next);
    }
    // Both workers served (and resumed) some of them.
    REQUIRE(UpstreamServer::wait_until(
        [&] { return workers_in(read_text(access)).size() == 2 * (reconnects + 2); }, 5s));
    std::vector<int> workers = workers_in(read_text(access));
    std::set<int> distinct(workers.begin(), workers.end());
    CHECK(distinct == std::set<int>{0, 1});
}

TEST_CASE("tls: session_tickets = false resumes nothing", "[tls][resumption]") {
    Certificates certs;
    Portico portico(tls_config({certs.entry("a")}, respond_fine, "session_tickets = false\n"));
    uint16_t port = tls_port(portico);
    for (int version : {TLS1_3_VERSION, TLS1_2_VERSION}) {
        INFO((version == TLS1_3_VERSION ? "TLS 1.3" : "TLS 1.2"));
        Visit first = visit(port, version, nullptr);
        REQUIRE(first.next);
        CHECK_FALSE(SSL_SESSION_has_ticket(first.next));
        for (int i = 0; i < 3; ++i) {
            Visit again = visit(port, version, first.next);
            CHECK_FALSE(again.reused);
            SSL_SESSION_free(again.next);
        }
        SSL_SESSION_free(first.next);
    }
}
