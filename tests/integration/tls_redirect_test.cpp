// redirect_http = true: every request on a cleartext listener is sent to
// https (301 for GET and HEAD, 308 otherwise) with its host (without the
// port), path and query, except the ACME challenges; /healthz too.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "http2_support.hpp"
#include "skip.hpp"
#include "static_site.hpp"
#include "tls_support.hpp"

using namespace portico::test;

namespace {

// Why this process may not listen on ip:port, or "" when it may (binding a
// port under 1024 needs root or CAP_NET_BIND_SERVICE).
std::string cannot_bind(const char* ip, uint16_t port) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    ::inet_pton(AF_INET, ip, &address.sin_addr);
    const int result = ::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address);
    const int error = errno;
    ::close(fd);
    return result == 0 ? "" : std::strerror(error);
}

std::string redirect_config(const Certificates& certs, const Site& site,
                            const std::string& tls_listen = "") {
    std::string text = tls_config({certs.entry("a")}, R"(
[[location]]
prefix = "/.well-known/acme-challenge/"
root = ")" + site.root() + R"("
dotfiles = true

[[location]]
prefix = "/"
root = ")" + site.root() + R"("
)",
                                  "redirect_http = true\n");
    if (!tls_listen.empty()) {
        const std::string from = "listen = [\"127.0.0.1:0\"]\ncertificates";
        text.replace(text.find(from), from.size(),
                     "listen = [\"" + tls_listen + "\"]\ncertificates");
    }
    return text;
}

std::optional<Response> plain(uint16_t port, const std::string& request) {
    Client client(port);
    client.send(request);
    return client.read_response(5s, request.rfind("HEAD ", 0) == 0);
}

}  // namespace

TEST_CASE("tls: redirect_http sends cleartext requests to https, except ACME challenges",
          "[tls][redirect]") {
    Certificates certs;
    Site site;
    site.write("page.html", "<p>page</p>\n");
    site.write(".well-known/acme-challenge/x", "token-x\n");
    Portico portico(redirect_config(certs, site));
    uint16_t port = tls_port(portico);
    const std::string https = "https://front.example:" + std::to_string(port);

    struct Case {
        std::string request;
        int status;
        std::string location;
    };
    const std::vector<Case> cases = {
        {"GET /page.html?x=1&y=%20 HTTP/1.1\r\nHost: front.example:8080\r\n\r\n", 301,
         https + "/page.html?x=1&y=%20"},
        {"GET / HTTP/1.1\r\nHost: front.example\r\n\r\n", 301, https + "/"},
        {"HEAD /a/b HTTP/1.1\r\nHost: front.example:80\r\n\r\n", 301, https + "/a/b"},
        {"POST /form?q HTTP/1.1\r\nHost: front.example\r\nContent-Length: 4\r\n\r\nbody", 308,
         https + "/form?q"},
        {"PUT /file HTTP/1.1\r\nHost: front.example\r\nContent-Length: 1\r\n\r\nx", 308,
         https + "/file"},
        {"DELETE /file HTTP/1.1\r\nHost: front.example\r\n\r\n", 308, https + "/file"},
        // The path as the client wrote it, encoded bytes included.
        {"GET /a%20b/../c HTTP/1.1\r\nHost: front.example\r\n\r\n", 301, https + "/a%20b/../c"},
        {"GET /x HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n", 301,
         "https://[::1]:" + std::to_string(port) + "/x"},
        // /healthz on a cleartext listener is a path like any other.
        {"GET /healthz HTTP/1.1\r\nHost: front.example\r\n\r\n", 301, https + "/healthz"},
        // Not a challenge: only the folder's contents are exempt.
        {"GET /.well-known/other HTTP/1.1\r\nHost: front.example\r\n\r\n", 301,
         https + "/.well-known/other"},
    };
    for (const Case& c : cases) {
        INFO(c.request.substr(0, c.request.find('\r')));
        auto response = plain(portico.port(), c.request);
        REQUIRE(response);
        CHECK(response->status == c.status);
        CHECK(response->header("location") == c.location);
    }

    // No Host to redirect to.
    auto hostless = plain(portico.port(), "GET /x HTTP/1.0\r\n\r\n");
    REQUIRE(hostless);
    CHECK(hostless->status == 400);
    CHECK(hostless->header("location") == "");

    // The ACME challenge is served in clear text, as the CA fetches it.
    auto challenge =
        plain(portico.port(),
              "GET /.well-known/acme-challenge/x HTTP/1.1\r\nHost: front.example\r\n\r\n");
    REQUIRE(challenge);
    CHECK(challenge->status == 200);
    CHECK(challenge->body == "token-x\n");
    CHECK(challenge->header("location") == "");

    // Over TLS nothing is redirected.
    TlsOptions options;
    options.server_name = "a.test";
    auto secure =
        tls_fetch(port, "GET /page.html HTTP/1.1\r\nHost: front.example\r\n\r\n", options);
    REQUIRE(secure);
    CHECK(secure->status == 200);
    CHECK(secure->body == "<p>page</p>\n");
    // ...and the Location really leads there.
    auto followed = tls_fetch(
        port, "GET /page.html?x=1&y=%20 HTTP/1.1\r\nHost: front.example\r\n\r\n", options);
    REQUIRE(followed);
    CHECK(followed->status == 200);
}

TEST_CASE("tls: redirect_http to a TLS listener on port 443 names no port", "[tls][redirect]") {
    Certificates certs;
    Site site;
    // A loopback address of its own, so port 443 is free whatever else runs;
    // but only root may listen there.
    if (std::string why = cannot_bind("127.0.0.77", 443); !why.empty())
        PORTICO_SKIP(
            "cannot listen on 127.0.0.77:443 here (root or CAP_NET_BIND_SERVICE): " << why);
    std::optional<Portico> portico;
    try {
        portico.emplace(redirect_config(certs, site, "127.0.0.77:443"));
    } catch (const std::exception& error) {
        PORTICO_SKIP("cannot listen on 127.0.0.77:443 here: " << error.what());
    }
    REQUIRE(tls_port(*portico) == 443);
    auto response =
        plain(portico->port(), "GET /a?b=c HTTP/1.1\r\nHost: front.example:8080\r\n\r\n");
    REQUIRE(response);
    CHECK(response->status == 301);
    CHECK(response->header("location") == "https://front.example/a?b=c");
}

// h2c streams go through the same routing as HTTP/1.1 requests: a cleartext
// listener with redirect_http sends them to https too, with their
// :authority as the host.
TEST_CASE("tls: redirect_http applies to h2c streams on the cleartext listener, challenges excepted",
          "[tls][redirect][http2]") {
    Certificates certs;
    Site site;
    site.write(".well-known/acme-challenge/x", "token-x\n");
    Portico portico(redirect_config(certs, site) + "\n[http2]\ncleartext = true\n");
    const std::string https = "https://front.example:" + std::to_string(tls_port(portico));

    h2::Client client(portico.port());
    uint32_t get = client.get("/page.html?x=1", {}, "GET", "front.example:8080");
    uint32_t post = client.get("/form", {{"content-length", "0"}}, "POST", "front.example");
    uint32_t challenge = client.get("/.well-known/acme-challenge/x", {}, "GET", "front.example");
    REQUIRE(client.wait_streams({get, post, challenge}));
    INFO(client.trace());
    CHECK(client.result(get).status == 301);
    CHECK(client.result(get).header("location") == https + "/page.html?x=1");
    CHECK(client.result(post).status == 308);
    CHECK(client.result(post).header("location") == https + "/form");
    CHECK(client.result(challenge).status == 200);
    CHECK(client.result(challenge).body == "token-x\n");
    CHECK_FALSE(client.goaway());
}
