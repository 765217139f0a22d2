// [tls] as the operator meets it: `portico -t` loads every certificate and
// key and says where each problem is (FILE:LINE:COL), warns of expiry, and
// SIGHUP reloads certificates (a broken one keeps the old config serving).
#include <signal.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "tls_support.hpp"

using namespace portico::test;

namespace {

// The config below puts its first certificate entry at line 7, column 3,
// and `extra` (more [tls] keys) from line 9.
std::string check_text(const std::string& entry, const std::string& extra = "",
                       const std::string& server_listen = "127.0.0.1:0",
                       const std::string& tls_listen = "127.0.0.1:0") {
    return "[server]\n"  // 1
           "listen = [\"" +
           server_listen +
           "\"]\n"    // 2
           "\n"       // 3
           "[tls]\n"  // 4
           "listen = [\"" +
           tls_listen +
           "\"]\n"               // 5
           "certificates = [\n"  // 6
           "  " +
           entry +
           ",\n"    // 7
           "]\n" +  // 8
           extra +  // 9...
           "\n[[location]]\nprefix = \"/\"\nrespond = { status = 200, body = \"ok\" }\n";
}

struct Checked {
    CommandResult result;
    std::string path;
};

Checked check(const TempDir& dir, const std::string& text) {
    Checked checked;
    checked.path = dir.write("check.toml", text);
    checked.result = check_config(checked.path);
    return checked;
}

std::string copy(const Certificates& certs, const std::string& from, const std::string& to) {
    std::filesystem::copy_file(certs.path(from), certs.path(to),
                               std::filesystem::copy_options::overwrite_existing);
    return certs.path(to);
}

std::string entry_of(const std::string& cert, const std::string& key) {
    return "{ cert = \"" + cert + "\", key = \"" + key + "\" }";
}

}  // namespace

TEST_CASE("tls: portico -t passes a good tls table and says where each certificate problem is",
          "[tls][config]") {
    Certificates certs;
    TempDir dir;
    {
        Checked good = check(dir, check_text(certs.entry("a")));
        INFO(good.result.output);
        CHECK(good.result.exit_code == 0);
        CHECK(good.result.output.find("is valid") != std::string::npos);
        CHECK(good.result.output.find("warning") == std::string::npos);
    }
    const std::string garbage = dir.write("garbage.pem", "not a PEM file\n");
    const std::string unreadable = copy(certs, "a.key", "unreadable.key");
    REQUIRE(::chmod(unreadable.c_str(), 0) == 0);
    struct Bad {
        std::string what;
        std::string text;
        std::string where;    // LINE:COL
        std::string message;  // part of it
    };
    const std::vector<Bad> cases = {
        {"missing certificate",
         check_text(entry_of(certs.path("missing.pem"), certs.path("a.key"))), "7:3",
         "cannot read certificate " + certs.path("missing.pem") + ": No such file or directory"},
        {"missing key", check_text(entry_of(certs.path("a.pem"), certs.path("missing.key"))), "7:3",
         "cannot read key " + certs.path("missing.key") + ": No such file or directory"},
        {"key of another certificate",
         check_text(entry_of(certs.path("a.pem"), certs.path("wild.key"))), "7:3",
         "key " + certs.path("wild.key") + " does not match certificate " + certs.path("a.pem")},
        {"RSA key for an ECDSA certificate",
         check_text(entry_of(certs.path("a.pem"), certs.path("rsa.key"))), "7:3",
         "key " + certs.path("rsa.key") + " does not match certificate " + certs.path("a.pem")},
        {"unreadable key", check_text(entry_of(certs.path("a.pem"), unreadable)), "7:3",
         "cannot read key " + unreadable + ": Permission denied"},
        {"certificate not PEM", check_text(entry_of(garbage, certs.path("a.key"))), "7:3",
         "cannot load certificate " + garbage},
        {"key not PEM", check_text(entry_of(certs.path("a.pem"), garbage)), "7:3",
         "cannot load key " + garbage},
        {"bad cipher list", check_text(certs.entry("a"), "ciphers = \"NOT-A-CIPHER:RC4-MD5\"\n"),
         "9:11", "tls.ciphers: no usable cipher"},
        {"TLSv1.1 in protocols",
         check_text(certs.entry("a"), "protocols = [\"TLSv1.1\", \"TLSv1.2\"]\n"), "9:13",
         "TLS 1.0 and 1.1 are not offered"},
        {"TLSv1.0 alone", check_text(certs.entry("a"), "protocols = [\"TLSv1.0\"]\n"), "9:13",
         "TLS 1.0 and 1.1 are not offered"},
        {"ocsp_stapling not a boolean", check_text(certs.entry("a"), "ocsp_stapling = \"yes\"\n"),
         "9:17", "tls.ocsp_stapling: expected"},
        {"ocsp_responder not an http URL",
         check_text(certs.entry("a"), "ocsp_responder = \"ldap://ocsp.test\"\n"), "9:18",
         "tls.ocsp_responder: expected the responder's http:// or https:// URL"},
        {"ocsp_responder without a host",
         check_text(certs.entry("a"), "ocsp_responder = \"http://\"\n"), "9:18",
         "tls.ocsp_responder: expected the responder's http:// or https:// URL"},
        {"an address in both listen lists",
         check_text(certs.entry("a"), "", "127.0.0.1:18443", "127.0.0.1:18443"), "5:10",
         "127.0.0.1:18443 is in both"},
    };
    for (const Bad& c : cases) {
        INFO(c.what);
        Checked checked = check(dir, c.text);
        INFO(checked.result.output);
        CHECK(checked.result.exit_code == 1);
        CHECK(checked.result.output.find(checked.path + ":" + c.where + ": ") != std::string::npos);
        CHECK(checked.result.output.find(c.message) != std::string::npos);
        // The key's bytes are never echoed.
        CHECK(checked.result.output.find("PRIVATE KEY") == std::string::npos);
    }
}

TEST_CASE("tls: portico -t reports every certificate problem at once, a bad cipher list too",
          "[tls][config]") {
    Certificates certs;
    TempDir dir;
    const std::vector<std::string> lines = {
        "[server]",
        "listen = [\"127.0.0.1:0\"]",
        "",
        "[tls]",
        "listen = [\"127.0.0.1:0\"]",
        "certificates = [",
        "  " + entry_of(certs.path("missing.pem"), certs.path("a.key")) + ",",  // line 7
        "  " + entry_of(certs.path("a.pem"), certs.path("wild.key")) + ",",     // line 8
        "  " + certs.entry("cn") + ",",                                         // good
        "]",
        "ciphers = \"NOT-A-CIPHER\"",  // line 11
        "",
        "[[location]]",
        "prefix = \"/\"",
        "respond = { status = 200, body = \"ok\" }",
    };
    std::string text;
    for (const std::string& line : lines) text += line + "\n";
    Checked checked = check(dir, text);
    INFO(checked.result.output);
    CHECK(checked.result.exit_code == 1);
    for (const char* where : {":7:3: cannot read certificate", ":8:3: key ", ":11:11: tls.ciphers"})
        CHECK(checked.result.output.find(checked.path + where) != std::string::npos);
    CHECK(checked.result.output.find("has 3 problem(s)") != std::string::npos);
    // The cipher list is named once, and no other message carries its error.
    CHECK(checked.result.output.find("no cipher match") ==
          checked.result.output.rfind("no cipher match"));
}

TEST_CASE("tls: portico -t warns of a certificate expiring within 30 days, and exits 0",
          "[tls][config]") {
    Certificates certs;
    TempDir dir;
    for (const auto& [name, warning] : std::vector<std::pair<std::string, std::string>>{
             {"soon", ".pem expires in "}, {"old", "expired on"}}) {
        INFO(name);
        Checked checked = check(dir, check_text(certs.entry(name)));
        INFO(checked.result.output);
        CHECK(checked.result.exit_code == 0);
        CHECK(checked.result.output.find("warning: certificate " + certs.path(name + ".pem")) !=
              std::string::npos);
        CHECK(checked.result.output.find(warning) != std::string::npos);
        CHECK(checked.result.output.find(" is valid") != std::string::npos);
    }
}

TEST_CASE("tls: SIGHUP keeps the old certificate on a broken file and serves a replaced one",
          "[tls][config][reload]") {
    Certificates certs;
    const std::string cert = copy(certs, "a.pem", "served.pem");
    const std::string key = copy(certs, "a.key", "served.key");
    const std::string text =
        tls_config({entry_of(cert, key)},
                   "[[location]]\nprefix = \"/\"\nrespond = { status = 200, body = \"ok\" }\n", "",
                   "workers = 2\n");
    Portico portico(text);
    uint16_t port = tls_port(portico);
    auto served = [&](const std::string& name) {
        TlsOptions options;
        options.server_name = name;
        TlsClient client(port, options);
        REQUIRE(client.handshake());
        REQUIRE(client.send("GET / HTTP/1.1\r\nHost: t\r\n\r\n"));
        ResponseReader reader(client);
        auto response = reader.read();
        REQUIRE(response);
        CHECK(response->body == "ok");
        return client.peer_subject();
    };
    CHECK(served("a.test") == "CN=a.test");

    // Broken, one way then another: each reload fails, naming the entry,
    // and the old workers go on serving the old certificate.
    const std::vector<std::pair<std::string, std::string>> breakages = {
        {"garbage", "cannot load certificate " + cert},
        {"mismatch", "does not match certificate " + cert},
        {"missing", "cannot read certificate " + cert},
    };
    int failures = 0;
    for (const auto& [how, message] : breakages) {
        INFO(how);
        if (how == "garbage") {
            certs.write("served.pem",
                        "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
        } else if (how == "mismatch") {
            copy(certs, "wild.pem", "served.pem");  // the key is still a.test's
        } else {
            std::filesystem::remove(cert);
        }
        portico.signal(SIGHUP);
        REQUIRE(portico.wait_for_log("reload failed", ++failures));
        std::string log = portico.log();
        // The entry is on line 8 of tls_config's text.
        CHECK(log.find(portico.config_path() + ":8:3: ") != std::string::npos);
        CHECK(log.find(message) != std::string::npos);
        for (int i = 0; i < 4; ++i) CHECK(served("a.test") == "CN=a.test");
    }
    CHECK(log_lines_above_info(portico.log()).size() >= 3);  // the failures were told

    // Replaced by a good pair: the new workers serve it.
    copy(certs, "wild.pem", "served.pem");
    copy(certs, "wild.key", "served.key");
    portico.signal(SIGHUP);
    REQUIRE(portico.wait_for_log("reloaded:"));
    REQUIRE(portico.wait_for_log("draining:", 2));  // both old workers stopped accepting
    for (int i = 0; i < 4; ++i) {
        CHECK(served("b.x.test") == "CN=wildcard");
        CHECK(served("a.test") == "CN=wildcard");  // the only, so the default
    }
}
