// A file changed on disk is served fresh from the very next request, though
// its descriptor, stat and (small files) bytes are cached: rewritten in
// place within the same second, renamed over, deleted, made unreadable, a
// directory replaced by a file, a symbolic link retargeted. Each change is
// followed at once by a GET and by a conditional GET with the old ETag: the
// new bytes, a new ETag, never the old ones (and never a 304).
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "harness.hpp"
#include "static_site.hpp"

using namespace portico::test;

namespace {

namespace fs = std::filesystem;

// Rewrites the file in place: same inode, truncated and written again.
void rewrite_in_place(const std::string& path, const std::string& content) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

// A small file is served from the cache's copy of its bytes; a large one
// with sendfile from the cached descriptor. Both must follow the disk.
std::string body_of_size(size_t size, char fill) { return std::string(size, fill); }

class Checker {
public:
    Checker(uint16_t port, const std::string& target) : port_(port), target_(target) {}

    // A GET on a new connection and one on a kept-alive connection; returns
    // the ETag they agree on.
    std::string expect_body(const std::string& body) {
        auto fresh = fetch(port_, target_);
        REQUIRE(fresh);
        CHECK(fresh->status == 200);
        CHECK(fresh->body.size() == body.size());
        CHECK((fresh->body == body));
        kept_.send("GET " + target_ + " HTTP/1.1\r\nHost: t\r\n\r\n");
        auto kept = kept_.read_response();
        REQUIRE(kept);
        CHECK(kept->status == 200);
        CHECK((kept->body == body));
        CHECK(kept->header("etag") == fresh->header("etag"));
        return fresh->header("etag");
    }

    // If-None-Match with an ETag of the old file: the new file, 200.
    void expect_old_etag_misses(const std::string& old_etag, const std::string& body) {
        auto response = fetch(port_, target_, "If-None-Match: " + old_etag + "\r\n");
        REQUIRE(response);
        CHECK(response->status == 200);
        CHECK((response->body == body));
        CHECK(response->header("etag") != old_etag);
    }

    void expect_status(int status) {
        auto response = fetch(port_, target_);
        REQUIRE(response);
        CHECK(response->status == status);
        kept_.send("GET " + target_ + " HTTP/1.1\r\nHost: t\r\n\r\n");
        auto kept = kept_.read_response();
        REQUIRE(kept);
        CHECK(kept->status == status);
    }

private:
    uint16_t port_;
    std::string target_;
    Client kept_{port_};
};

// The kernel stamps mtimes from a coarse clock (a few ms): a rewrite this
// much later gets another nanosecond stamp, though usually the same second.
void let_the_clock_tick() { std::this_thread::sleep_for(30ms); }

}  // namespace

TEST_CASE("static freshness: a file rewritten in place is served new at once", "[static][fresh]") {
    for (size_t size : {size_t{40}, size_t{100 * 1024}}) {
        INFO("size " << size);
        Site site;
        std::string path = site.write("app.js", body_of_size(size, 'a'));
        Portico portico(static_site_config(site.root()));
        Checker checker(portico.port(), "/app.js");
        std::string old_etag = checker.expect_body(body_of_size(size, 'a'));
        for (char fill : {'b', 'c', 'd'}) {
            let_the_clock_tick();
            rewrite_in_place(path, body_of_size(size, fill));  // same size
            std::string etag = checker.expect_body(body_of_size(size, fill));
            CHECK(etag != old_etag);
            checker.expect_old_etag_misses(old_etag, body_of_size(size, fill));
            old_etag = etag;
        }
    }
}

TEST_CASE("static freshness: a file renamed over the served one is served at once", "[static][fresh]") {
    for (size_t size : {size_t{40}, size_t{100 * 1024}}) {
        INFO("size " << size);
        Site site;
        site.write("app.js", body_of_size(size, 'a'));
        Portico portico(static_site_config(site.root()));
        Checker checker(portico.port(), "/app.js");
        std::string old_etag = checker.expect_body(body_of_size(size, 'a'));
        // The deploy tool's way: write a new file beside it, then mv it over.
        let_the_clock_tick();
        std::string staged = site.write("app.js.tmp", body_of_size(size, 'z'));
        REQUIRE(std::rename(staged.c_str(), site.path("app.js").c_str()) == 0);
        checker.expect_body(body_of_size(size, 'z'));
        checker.expect_old_etag_misses(old_etag, body_of_size(size, 'z'));
    }
}

TEST_CASE("static freshness: a deleted file is 404 at once, and served again once back",
          "[static][fresh]") {
    Site site;
    site.write("sub/page.html", "page\n");
    Portico portico(static_site_config(site.root()));
    Checker checker(portico.port(), "/sub/page.html");
    std::string old_etag = checker.expect_body("page\n");
    fs::remove(site.path("sub/page.html"));
    checker.expect_status(404);
    auto conditional = fetch(portico.port(), "/sub/page.html", "If-None-Match: " + old_etag + "\r\n");
    REQUIRE(conditional);
    CHECK(conditional->status == 404);
    site.write("sub/page.html", "back\n");
    checker.expect_body("back\n");
}

TEST_CASE("static freshness: a file made unreadable is 403 at once", "[static][fresh]") {
    Site site;
    std::string path = site.write("secret.txt", "was public\n");
    Portico portico(static_site_config(site.root()));
    Checker checker(portico.port(), "/secret.txt");
    std::string old_etag = checker.expect_body("was public\n");
    REQUIRE(::chmod(path.c_str(), 0) == 0);
    checker.expect_status(403);
    auto conditional = fetch(portico.port(), "/secret.txt", "If-None-Match: " + old_etag + "\r\n");
    REQUIRE(conditional);
    CHECK(conditional->status == 403);
    REQUIRE(::chmod(path.c_str(), 0644) == 0);
    checker.expect_body("was public\n");
}

TEST_CASE("static freshness: a directory replaced by a file, and back", "[static][fresh]") {
    Site site;
    site.write("docs/index.html", "docs index\n");
    Portico portico(static_site_config(site.root()));
    Checker index(portico.port(), "/docs/index.html");
    Checker directory(portico.port(), "/docs/");
    index.expect_body("docs index\n");
    directory.expect_body("docs index\n");
    auto redirect = fetch(portico.port(), "/docs");
    REQUIRE(redirect);
    CHECK(redirect->status == 301);

    fs::remove_all(site.path("docs"));
    site.write("docs", "now a file\n");
    Checker file(portico.port(), "/docs");
    file.expect_body("now a file\n");
    index.expect_status(404);
    directory.expect_status(404);

    fs::remove(site.path("docs"));
    site.write("docs/index.html", "docs again\n");
    index.expect_body("docs again\n");
    directory.expect_body("docs again\n");
}

TEST_CASE("static freshness: a symbolic link on the way retargeted", "[static][fresh]") {
    Site site;
    site.write("v1/app.js", "version 1\n");
    site.write("v2/app.js", "version 2\n");
    fs::create_directory_symlink("v1", site.path("current"));
    Portico portico(static_site_config(site.root()));
    Checker checker(portico.port(), "/current/app.js");
    std::string old_etag = checker.expect_body("version 1\n");
    // Atomic switch, as release tools do: a new link renamed over the old.
    fs::create_directory_symlink("v2", site.path("current.new"));
    fs::rename(site.path("current.new"), site.path("current"));
    checker.expect_body("version 2\n");
    // Files under the old target no longer matter to /current...
    let_the_clock_tick();
    rewrite_in_place(site.path("v1/app.js"), "version 1b\n");
    checker.expect_body("version 2\n");
    // ...and the new target's changes do.
    let_the_clock_tick();
    rewrite_in_place(site.path("v2/app.js"), "version 2b\n");
    checker.expect_body("version 2b\n");
}


TEST_CASE("static freshness: a file that is a symbolic link follows its target", "[static][fresh]") {
    // A Kubernetes ConfigMap volume: every file a link into a folder that an
    // update swaps; or `latest.css -> app.1.css`, retargeted or rewritten.
    Site site;
    site.write("assets/app.1.css", "one\n");
    site.write("assets/app.2.css", "two\n");
    fs::create_symlink("assets/app.1.css", site.path("latest.css"));
    Portico portico(static_site_config(site.root()));
    Checker checker(portico.port(), "/latest.css");
    std::string old_etag = checker.expect_body("one\n");
    // The target rewritten in place: no event names the link.
    let_the_clock_tick();
    rewrite_in_place(site.path("assets/app.1.css"), "uno\n");
    checker.expect_body("uno\n");
    checker.expect_old_etag_misses(old_etag, "uno\n");
    // The link retargeted.
    fs::remove(site.path("latest.css"));
    fs::create_symlink("assets/app.2.css", site.path("latest.css"));
    checker.expect_body("two\n");
}
