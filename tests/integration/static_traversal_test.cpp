// Static files (issue 3): no request ever reads a file outside the root.
// Traversal attempts in every encoding, symbolic links in and out of the
// root, dotfiles, odd file types; each bad input gets its status and the
// next client is served.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "harness.hpp"
#include "static_site.hpp"

using namespace portico::test;

namespace {

namespace fs = std::filesystem;

const std::string marker = "SECRET-MARKER-5d1f0c9a";
const std::string inside_body = "<h1>inside</h1>\n";

// SITE/www is the root. SITE/secret.txt, SITE/outside/ and SITE/www2/ (a
// sibling whose path starts with the root's path) lie outside it, and all
// hold the marker.
struct SiteWithSecrets {
    TempDir dir;
    SiteWithSecrets() {
        dir.write("www/index.html", inside_body);
        dir.write("www/sub/page.txt", "page inside\n");
        dir.write("secret.txt", marker + " top\n");
        dir.write("outside/secret.txt", marker + " outside\n");
        dir.write("outside/index.html", marker + " outside index\n");
        dir.write("www2/secret.txt", marker + " sibling\n");
        dir.write("www2/index.html", marker + " sibling index\n");
    }
    std::string root() const { return dir.path() + "/www"; }
    std::string path(const std::string& relative) const { return dir.path() + "/" + relative; }
};

// A request with Connection: close; `parsed` gets the response (nullopt
// when none came) and the result is every byte the server sent.
std::string raw_exchange(uint16_t port, const std::string& target, std::optional<Response>& parsed) {
    Client client(port);
    client.send("GET " + target + " HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n");
    parsed = client.read_response(5s);
    std::string raw;
    if (parsed) raw = parsed->head + "\r\n\r\n" + parsed->body;
    // Whatever followed (or all of it, when no response could be parsed).
    if (auto rest = client.read_until_close(2s)) raw += *rest;
    return raw;
}

void expect_next_client_gets_index(uint16_t port) {
    auto response = fetch(port, "/index.html");
    REQUIRE(response);
    CHECK(response->status == 200);
    CHECK(response->body == inside_body);
}

struct Attempt {
    std::string target;
    std::vector<int> statuses;  // any of these
};

void check_attempts(uint16_t port, const std::vector<Attempt>& attempts) {
    for (const Attempt& a : attempts) {
        INFO("GET " << (a.target.size() > 200 ? a.target.substr(0, 200) + "..." : a.target));
        std::optional<Response> response;
        const std::string raw = raw_exchange(port, a.target, response);
        CHECK_FALSE(contains(raw, marker));
        REQUIRE(response);
        INFO("status " << response->status);
        CHECK(std::find(a.statuses.begin(), a.statuses.end(), response->status) !=
              a.statuses.end());
        expect_next_client_gets_index(port);
    }
}

}  // namespace

TEST_CASE("static traversal: no encoding of '..' reaches outside the root", "[static]") {
    SiteWithSecrets site;
    Portico portico(static_site_config(site.root()));
    const uint16_t port = portico.port();

    const std::vector<Attempt> attempts = {
        // Dot segments climbing above "/": 400.
        {"/../secret.txt", {400}},
        {"/..", {400}},
        {"/../", {400}},
        {"/sub/../../secret.txt", {400}},
        {"/../../../../../../../../etc/passwd", {400}},
        {"/%2e%2e/secret.txt", {400}},
        {"/%2E%2E/secret.txt", {400}},
        {"/.%2e/secret.txt", {400}},
        {"/%2e./secret.txt", {400}},
        {"/%2e%2e", {400}},
        {"/sub/%2e%2e/%2e%2e/secret.txt", {400}},
        {"/www/../../secret.txt", {400}},
        // Encoded slashes: 400 (they change the meaning of the path).
        {"/%2e%2e%2fsecret.txt", {400}},
        {"/..%2fsecret.txt", {400}},
        {"/..%2Fsecret.txt", {400}},
        {"/sub/..%2f..%2fsecret.txt", {400}},
        {"/sub%2f..%2f..%2fsecret.txt", {400}},
        {"/sub%2fpage.txt", {400}},
        {"/sub%2Fpage.txt", {400}},
        // NUL bytes: 400.
        {"/%00", {400}},
        {"/a%00.html", {400}},
        {"/index.html%00.txt", {400}},
        {"/%00/../secret.txt", {400}},
        // Decoded once only: "%2e%2e" is then a file name, which does not exist.
        {"/%252e%252e/secret.txt", {404}},
        {"/%252e%252e%252fsecret.txt", {404}},
        {"/%25%32%65%25%32%65/secret.txt", {404}},
        // Backslashes are not separators.
        {"/..\\secret.txt", {400, 404}},
        {"/%5c..%5csecret.txt", {404}},
        {"/..%5csecret.txt", {404}},
        {"/%2e%2e%5csecret.txt", {404}},
        // Overlong UTF-8 dots are just bytes.
        {"/%c0%ae%c0%ae/secret.txt", {404}},
        {"/%c0%ae%c0%ae%c0%afsecret.txt", {404}},
        // Paths that resolve inside the root, where the name does not exist.
        {"/secret.txt", {404}},
        {"//secret.txt", {404}},
        {"/./secret.txt", {404}},
        {"/%2e/secret.txt", {404}},
        {"/www/../secret.txt", {404}},
        {"/sub/../secret.txt", {404}},
        {"/...", {404}},
        {"/.../secret.txt", {404}},
        // Absolute-form targets.
        {"http://test/../secret.txt", {400, 404}},
        {"http://test/secret.txt", {404}},
        // Very long paths (still under max_header_bytes): 404, not 500.
        {"/" + [] { std::string s; for (int i = 0; i < 3000; ++i) s += "a/"; return s; }() + "x", {404}},
        {"/" + std::string(300, 'a'), {404}},
        {"/" + std::string(300, 'a') + "/x", {404}},
        {"/" + [] { std::string s; for (int i = 0; i < 1000; ++i) s += "../"; return s; }() +
             "secret.txt",
         {400}},
        // A file used as a directory.
        {"/index.html/x", {404}},
        {"/index.html/", {404}},
        {"/index.html/..", {200, 404}},  // normalizes to "/": the index is fine too
    };
    check_attempts(port, attempts);
}

TEST_CASE("static traversal: the marker check sees a leak (positive control)", "[static]") {
    // The same check as the attempts above, on a file that does hold the
    // marker inside the root: it must see it, or the other tests prove nothing.
    SiteWithSecrets site;
    site.dir.write("www/control.txt", marker + " control\n");
    Portico portico(static_site_config(site.root()));
    std::optional<Response> response;
    const std::string raw = raw_exchange(portico.port(), "/control.txt", response);
    REQUIRE(response);
    CHECK(response->status == 200);
    CHECK(contains(raw, marker));
}

TEST_CASE("static traversal: symbolic links leading outside the root are 404", "[static]") {
    SiteWithSecrets site;
    const std::string www = site.root();
    fs::create_symlink(site.path("secret.txt"), www + "/link-out");
    fs::create_symlink("../secret.txt", www + "/link-out-rel");
    fs::create_symlink("../../secret.txt", www + "/sub/deep-out");
    fs::create_directory_symlink(site.path("outside"), www + "/dir-out");
    fs::create_directory_symlink("../outside", www + "/dir-out-rel");
    // A sibling whose path has the root's path as a prefix ("www2" vs "www").
    fs::create_symlink(site.path("www2/secret.txt"), www + "/sibling");
    fs::create_directory_symlink(site.path("www2"), www + "/sibling-dir");
    fs::create_symlink("link-out", www + "/chain-out");
    fs::create_symlink("/etc/passwd", www + "/passwd");
    fs::create_symlink("/dev/zero", www + "/zero");
    fs::create_symlink("loop", www + "/loop");
    fs::create_symlink(site.path("missing-target"), www + "/dangling");
    // An index file that leads outside.
    fs::create_directories(www + "/idx");
    fs::create_symlink(site.path("secret.txt"), www + "/idx/index.html");
    // A "directory" index: index.html is itself a directory.
    fs::create_directories(www + "/weird/index.html");
    Portico portico(static_site_config(site.root()));
    const uint16_t port = portico.port();

    const std::vector<Attempt> attempts = {
        {"/link-out", {404}},
        {"/link-out-rel", {404}},
        {"/sub/deep-out", {404}},
        {"/dir-out/secret.txt", {404}},
        {"/dir-out/", {404}},
        {"/dir-out", {404}},
        {"/dir-out-rel/secret.txt", {404}},
        {"/sibling", {404}},
        {"/sibling-dir/secret.txt", {404}},
        {"/sibling-dir/", {404}},
        {"/chain-out", {404}},
        {"/passwd", {404}},
        {"/zero", {404}},
        {"/loop", {403, 404}},
        {"/dangling", {404}},
        {"/idx/", {403, 404}},
        {"/weird/", {403, 404}},
    };
    check_attempts(port, attempts);

    // /etc/passwd's first line never shows either.
    auto passwd = fetch(port, "/passwd");
    REQUIRE(passwd);
    CHECK_FALSE(contains(passwd->body, "root:"));
}

TEST_CASE("static traversal: symbolic links that stay inside the root are followed",
          "[static]") {
    SiteWithSecrets site;
    const std::string www = site.root();
    fs::create_symlink("index.html", www + "/link-in");
    fs::create_symlink(www + "/sub/page.txt", www + "/link-in-abs");
    fs::create_symlink("../index.html", www + "/sub/up-in");
    fs::create_directory_symlink("sub", www + "/dir-in");
    fs::create_symlink("link-in", www + "/chain-in");
    Portico portico(static_site_config(site.root()));
    const uint16_t port = portico.port();

    struct Case {
        std::string target;
        std::string body;
    };
    for (const Case& c : std::vector<Case>{{"/link-in", inside_body},
                                           {"/link-in-abs", "page inside\n"},
                                           {"/sub/up-in", inside_body},
                                           {"/dir-in/page.txt", "page inside\n"},
                                           {"/chain-in", inside_body}}) {
        INFO(c.target);
        auto response = fetch(port, c.target);
        REQUIRE(response);
        CHECK(response->status == 200);
        CHECK(response->body == c.body);
    }
}

TEST_CASE("static traversal: dotfile segments are 404 unless dotfiles = true", "[static]") {
    SiteWithSecrets site;
    site.dir.write("www/.env", "DOTENV-CONTENT\n");
    site.dir.write("www/.git/config", "GIT-CONFIG\n");
    site.dir.write("www/a/.hidden/x", "HIDDEN-X\n");
    site.dir.write("www/.well-known/acme", "ACME\n");
    site.dir.write("www/.hidden-dir/index.html", "HIDDEN-INDEX\n");

    const std::vector<std::pair<std::string, std::string>> dotted = {
        {"/.env", "DOTENV-CONTENT\n"},
        {"/%2eenv", "DOTENV-CONTENT\n"},
        {"/.git/config", "GIT-CONFIG\n"},
        {"/a/.hidden/x", "HIDDEN-X\n"},
        {"/a/%2Ehidden/x", "HIDDEN-X\n"},
        {"/.well-known/acme", "ACME\n"},
        {"/.hidden-dir/", "HIDDEN-INDEX\n"},
    };

    SECTION("default: 404, nothing of the file shows, the next client is served") {
        Portico portico(static_site_config(site.root()));
        for (const auto& [target, body] : dotted) {
            INFO(target);
            std::optional<Response> response;
            const std::string raw = raw_exchange(portico.port(), target, response);
            REQUIRE(response);
            CHECK(response->status == 404);
            CHECK_FALSE(contains(raw, body));
            expect_next_client_gets_index(portico.port());
        }
        // Also no redirect that would reveal a dot directory.
        auto response = fetch(portico.port(), "/.git");
        REQUIRE(response);
        CHECK(response->status == 404);
        response = fetch(portico.port(), "/.hidden-dir");
        REQUIRE(response);
        CHECK(response->status == 404);
    }
    SECTION("dotfiles = true: served") {
        Portico portico(static_site_config(site.root(), "dotfiles = true\n"));
        for (const auto& [target, body] : dotted) {
            INFO(target);
            auto response = fetch(portico.port(), target);
            REQUIRE(response);
            CHECK(response->status == 200);
            CHECK(response->body == body);
        }
        // Still nothing above the root.
        std::optional<Response> response;
        CHECK_FALSE(contains(raw_exchange(portico.port(), "/../secret.txt", response), marker));
        REQUIRE(response);
        CHECK(response->status == 400);
    }
}

TEST_CASE("static traversal: files that are not regular files are refused without hanging",
          "[static]") {
    SiteWithSecrets site;
    // Opening a FIFO for reading blocks until a writer comes: a handler that
    // opens it without O_NONBLOCK freezes its worker.
    REQUIRE(::mkfifo((site.root() + "/fifo").c_str(), 0644) == 0);
    Portico portico(static_site_config(site.root()));
    const auto start = std::chrono::steady_clock::now();
    std::optional<Response> response;
    const std::string raw = raw_exchange(portico.port(), "/fifo", response);
    REQUIRE(response);
    CHECK((response->status == 403 || response->status == 404));
    CHECK(std::chrono::steady_clock::now() - start < 3s);
    expect_next_client_gets_index(portico.port());
}

TEST_CASE("static traversal: a bad request on a kept-alive connection harms nobody",
          "[static]") {
    SiteWithSecrets site;
    Portico portico(static_site_config(site.root()));
    Client client(portico.port());
    client.send("GET /%2e%2e/secret.txt HTTP/1.1\r\nHost: t\r\n\r\n");
    auto bad = client.read_response();
    REQUIRE(bad);
    CHECK(bad->status == 400);
    CHECK_FALSE(contains(bad->body, marker));
    // Either the connection goes on, or it is closed cleanly; a fresh client
    // is served in any case.
    client.send("GET /index.html HTTP/1.1\r\nHost: t\r\n\r\n");
    if (auto next = client.read_response(2s)) {
        CHECK(next->status == 200);
        CHECK(next->body == inside_body);
    }
    expect_next_client_gets_index(portico.port());
}

TEST_CASE("static traversal: gzip_static never follows a .gz link out of the root",
          "[static]") {
    SiteWithSecrets site;
    const std::string www = site.root();
    site.dir.write("www/app.js", "plain app\n");
    fs::create_symlink(site.path("secret.txt"), www + "/app.js.gz");
    site.dir.write("www/other.js", "plain other\n");
    fs::create_symlink("../secret.txt", www + "/other.js.gz");
    // A .gz whose plain file is a dotfile is not a way around dotfiles.
    site.dir.write("www/.env.gz", "DOTENV-GZ\n");
    site.dir.write("www/.env", "DOTENV-PLAIN\n");
    Portico portico(static_site_config(site.root(), "gzip_static = true\n"));
    const uint16_t port = portico.port();

    for (const std::string target : {"/app.js", "/other.js"}) {
        INFO(target);
        Client client(port);
        client.send("GET " + target + " HTTP/1.1\r\nHost: t\r\nAccept-Encoding: gzip\r\n\r\n");
        auto response = client.read_response();
        REQUIRE(response);
        CHECK_FALSE(contains(response->body, marker));
        CHECK((response->status == 200 || response->status == 404));
        if (response->status == 200) {
            CHECK(response->header("content-encoding").empty());
            CHECK(contains(response->body, "plain"));
        }
    }
    Client client(port);
    client.send("GET /.env HTTP/1.1\r\nHost: t\r\nAccept-Encoding: gzip\r\n\r\n");
    auto response = client.read_response();
    REQUIRE(response);
    CHECK(response->status == 404);
    CHECK_FALSE(contains(response->body, "DOTENV"));
    expect_next_client_gets_index(port);
}
