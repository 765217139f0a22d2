// Static files (issue 3) on the real binary: methods, directories, types,
// validators and conditional requests, ranges, gzip_static, extra headers,
// large files, HEAD, and a slow reader that must not stall its worker.
// Path safety (traversal, symlinks, dotfiles) is in static_traversal_test.cpp.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/http_date.hpp"
#include "harness.hpp"
#include "static_site.hpp"

using namespace portico::test;

namespace {

namespace fs = std::filesystem;

std::optional<Response> request(uint16_t port, const std::string& method,
                                const std::string& target, const std::string& headers = "",
                                std::chrono::milliseconds timeout = 5s) {
    Client client(port);
    client.send(method + " " + target + " HTTP/1.1\r\nHost: test\r\n" + headers + "\r\n");
    return client.read_response(timeout, method == "HEAD");
}

void set_mtime(const std::string& path, time_t when) {
    const timespec times[2] = {{when, 0}, {when, 0}};
    REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
}

std::string http_date(time_t when) {
    char text[portico::core::http_date_length];
    portico::core::format_http_date(when, text);
    return std::string(text, sizeof text);
}

std::string hex(uint64_t value) {
    char text[32];
    std::snprintf(text, sizeof text, "%llx", static_cast<unsigned long long>(value));
    return text;
}

// The documented ETag: "\"<mtime seconds hex>.<nanoseconds hex>-<size hex>\""
// (set_mtime leaves the nanoseconds at 0).
std::string expected_etag(time_t mtime, size_t size) {
    return "\"" + hex(static_cast<uint64_t>(mtime)) + ".0-" + hex(size) + "\"";
}

bool starts_with(const std::string& text, const std::string& prefix) {
    return text.rfind(prefix, 0) == 0;
}

constexpr time_t fixed_mtime = 1000000000;  // Sun, 09 Sep 2001 01:46:40 GMT
const std::string index_body = "<h1>home</h1>\n";
const std::string alphabet = "0123456789abcdefghijklmnopqrstuvwxyz";  // 36 bytes

}  // namespace

TEST_CASE("static: GET serves the file with type, length, validators and Accept-Ranges",
          "[static]") {
    Site site;
    set_mtime(site.write("index.html", index_body), fixed_mtime);
    site.write("hello world.txt", "spaced\n");
    site.write("caf\xC3\xA9.txt", "utf8\n");
    site.write("empty.txt", "");
    Portico portico(static_site_config(site.root()));

    auto response = request(portico.port(), "GET", "/index.html");
    REQUIRE(response);
    CHECK(response->status == 200);
    CHECK(response->body == index_body);
    CHECK(response->header("content-length") == std::to_string(index_body.size()));
    CHECK(response->header("content-type") == "text/html; charset=utf-8");
    CHECK(response->header("last-modified") == "Sun, 09 Sep 2001 01:46:40 GMT");
    CHECK(response->header("last-modified").size() == 29);
    CHECK(response->header("etag") == expected_etag(fixed_mtime, index_body.size()));
    CHECK(response->header("accept-ranges") == "bytes");
    CHECK(response->header("content-encoding").empty());

    // The query is not part of the file name.
    response = request(portico.port(), "GET", "/index.html?v=1&x=%2F");
    REQUIRE(response);
    CHECK(response->status == 200);
    CHECK(response->body == index_body);

    // Percent-decoded once into the file name.
    response = request(portico.port(), "GET", "/hello%20world.txt");
    REQUIRE(response);
    CHECK(response->status == 200);
    CHECK(response->body == "spaced\n");
    response = request(portico.port(), "GET", "/caf%C3%A9.txt");
    REQUIRE(response);
    CHECK(response->status == 200);
    CHECK(response->body == "utf8\n");

    // An empty file is a 200 with Content-Length: 0.
    response = request(portico.port(), "GET", "/empty.txt");
    REQUIRE(response);
    CHECK(response->status == 200);
    CHECK(response->header("content-length") == "0");
    CHECK(response->body.empty());
    // ...and has no byte to give a range of.
    response = request(portico.port(), "GET", "/empty.txt", "Range: bytes=0-0\r\n");
    REQUIRE(response);
    CHECK((response->status == 416 || response->status == 200));
    if (response->status == 416) CHECK(response->header("content-range") == "bytes */0");
    CHECK(response->body.empty() == (response->status == 200));

    // HTTP/1.0: the whole file, then the connection closes.
    {
        Client client(portico.port());
        client.send("GET /index.html HTTP/1.0\r\n\r\n");
        auto old_style = client.read_response();
        REQUIRE(old_style);
        CHECK(old_style->status == 200);
        CHECK(old_style->body == index_body);
        CHECK(client.closed_by_server());
    }

    // Missing files are 404, and the connection stays usable.
    Client client(portico.port());
    client.send("GET /missing.html HTTP/1.1\r\nHost: t\r\n\r\n");
    auto missing = client.read_response();
    REQUIRE(missing);
    CHECK(missing->status == 404);
    client.send("GET /index.html HTTP/1.1\r\nHost: t\r\n\r\n");
    auto after = client.read_response();
    REQUIRE(after);
    CHECK(after->status == 200);
    CHECK(after->body == index_body);
}

TEST_CASE("static: methods other than GET and HEAD get 405 with Allow", "[static]") {
    Site site;
    site.write("index.html", index_body);
    Portico portico(static_site_config(site.root()));

    for (const std::string method : {"POST", "PUT", "DELETE", "OPTIONS", "PATCH", "TRACE"}) {
        INFO(method);
        auto response = request(portico.port(), method, "/index.html");
        REQUIRE(response);
        CHECK(response->status == 405);
        CHECK(response->header("allow") == "GET, HEAD");
        CHECK_FALSE(contains(response->body, index_body));
    }
    // A POST with a body: 405, the body is consumed, the connection goes on.
    Client client(portico.port());
    client.send("POST /index.html HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello");
    auto response = client.read_response();
    REQUIRE(response);
    CHECK(response->status == 405);
    CHECK(response->header("allow") == "GET, HEAD");
    client.send("GET /index.html HTTP/1.1\r\nHost: t\r\n\r\n");
    auto next = client.read_response();
    REQUIRE(next);
    CHECK(next->status == 200);
    CHECK(next->body == index_body);
}

TEST_CASE("static: directories give the index, a redirect to add the slash, or 403",
          "[static]") {
    Site site;
    site.write("index.html", index_body);
    site.write("docs/index.html", "docs index\n");
    site.write("docs/deeper/index.html", "deeper index\n");
    fs::create_directories(site.root() + "/empty");
    site.write("noindex/file.txt", "file\n");
    Portico portico(static_site_config(site.root()));
    const uint16_t port = portico.port();

    auto response = request(port, "GET", "/");
    REQUIRE(response);
    CHECK(response->status == 200);
    CHECK(response->body == index_body);
    CHECK(response->header("content-type") == "text/html; charset=utf-8");

    response = request(port, "GET", "/docs/");
    REQUIRE(response);
    CHECK(response->status == 200);
    CHECK(response->body == "docs index\n");
    CHECK(response->header("content-type") == "text/html; charset=utf-8");

    response = request(port, "GET", "/docs/deeper/");
    REQUIRE(response);
    CHECK(response->status == 200);
    CHECK(response->body == "deeper index\n");

    response = request(port, "GET", "/docs");
    REQUIRE(response);
    CHECK(response->status == 301);
    CHECK(response->header("location") == "/docs/");

    response = request(port, "GET", "/docs/deeper");
    REQUIRE(response);
    CHECK(response->status == 301);
    CHECK(response->header("location") == "/docs/deeper/");

    // The query is kept.
    response = request(port, "GET", "/docs?x=1");
    REQUIRE(response);
    CHECK(response->status == 301);
    CHECK(response->header("location") == "/docs/?x=1");

    response = request(port, "HEAD", "/docs");
    REQUIRE(response);
    CHECK(response->status == 301);
    CHECK(response->header("location") == "/docs/");

    // No index: 403, with or without the slash (the redirect comes first).
    response = request(port, "GET", "/empty/");
    REQUIRE(response);
    CHECK(response->status == 403);
    response = request(port, "GET", "/noindex/");
    REQUIRE(response);
    CHECK(response->status == 403);
    CHECK_FALSE(contains(response->body, "file.txt"));  // no listing
    response = request(port, "GET", "/empty");
    REQUIRE(response);
    CHECK(response->status == 301);
    CHECK(response->header("location") == "/empty/");

    // The files of an index-less directory are still served.
    response = request(port, "GET", "/noindex/file.txt");
    REQUIRE(response);
    CHECK(response->status == 200);
    CHECK(response->body == "file\n");

    // Still serving after all that.
    response = request(port, "GET", "/index.html");
    REQUIRE(response);
    CHECK(response->status == 200);
}

TEST_CASE("static: index files are tried in the configured order", "[static]") {
    Site site;
    site.write("both/index.htm", "htm\n");
    site.write("both/default.html", "default\n");
    site.write("second/default.html", "second default\n");
    site.write("neither/index.html", "not in the list\n");
    Portico portico(static_site_config(site.root(), "index = [\"index.htm\", \"default.html\"]\n"));

    auto response = request(portico.port(), "GET", "/both/");
    REQUIRE(response);
    CHECK(response->status == 200);
    CHECK(response->body == "htm\n");
    CHECK(response->header("content-type") == "text/html; charset=utf-8");

    response = request(portico.port(), "GET", "/second/");
    REQUIRE(response);
    CHECK(response->status == 200);
    CHECK(response->body == "second default\n");

    response = request(portico.port(), "GET", "/neither/");
    REQUIRE(response);
    CHECK(response->status == 403);
    CHECK_FALSE(contains(response->body, "not in the list"));
}

TEST_CASE("static: the redirect's Location stays one safe header", "[static]") {
    Site site;
    site.write("my dir/index.html", "spaced dir\n");
    // A directory whose name holds CR LF: decoding its request path and
    // writing it back raw would split the response (header injection).
    site.write("x\r\nX-Injected: 1/index.html", "crlf dir\n");
    Portico portico(static_site_config(site.root()));

    auto response = request(portico.port(), "GET", "/my%20dir");
    REQUIRE(response);
    CHECK(response->status == 301);
    CHECK(response->header("location") == "/my%20dir/");
    response = request(portico.port(), "GET", response->header("location"));
    REQUIRE(response);
    CHECK(response->status == 200);
    CHECK(response->body == "spaced dir\n");

    response = request(portico.port(), "GET", "/x%0D%0AX-Injected:%201");
    REQUIRE(response);
    INFO(response->head);
    CHECK(response->status == 301);
    CHECK(response->header("x-injected").empty());
    CHECK_FALSE(contains(response->head, "\r\nX-Injected"));
    CHECK_FALSE(contains(response->header("location"), "\r"));
    CHECK_FALSE(contains(response->header("location"), "\n"));
}

TEST_CASE("static: the trailing-slash redirect is never an open redirect", "[static]") {
    // A Location starting with "//" (or "/\\", which browsers read the same
    // way) is a network-path reference: the browser would go to another host.
    Site site;
    site.write("docs/index.html", "docs\n");
    Portico portico(static_site_config(site.root()));
    for (const std::string target :
         {"//evil.example/../docs", "///evil.example/../docs", "//evil.example/%2e%2e/docs",
          "/\\evil.example/../docs", "//evil.example/..//docs?x=1"}) {
        INFO("GET " << target);
        auto response = request(portico.port(), "GET", target);
        REQUIRE(response);
        INFO("status " << response->status << ", Location: " << response->header("location"));
        CHECK((response->status == 301 || response->status == 400));
        const std::string location = response->header("location");
        if (response->status == 301) {
            CHECK(starts_with(location, "/"));
            CHECK_FALSE(starts_with(location, "//"));
            CHECK_FALSE(starts_with(location, "/\\"));
        }
    }
}

TEST_CASE("static: Content-Type from the built-in table and [mime]", "[static]") {
    Site site;
    struct Expected {
        std::string file;
        std::string type;
        bool exact;  // else the header only has to start with `type`
    };
    const std::vector<Expected> expected = {
        {"a.html", "text/html; charset=utf-8", true},
        {"a.css", "text/css; charset=utf-8", true},
        {"a.js", "text/javascript; charset=utf-8", true},
        {"a.json", "application/json", false},
        {"a.svg", "image/svg+xml", false},
        {"a.png", "image/png", true},
        {"a.jpg", "image/jpeg", true},
        {"a.wasm", "application/wasm", true},
        {"a.unknownext", "application/octet-stream", true},
        {"README", "application/octet-stream", true},
        {"UPPER.PNG", "image/png", true},
        {"a.foo", "application/x-foo", true},
        {"a.tar.gz", "application/gzip", true},
    };
    for (const Expected& e : expected) site.write(e.file, "content of " + e.file);
    Portico portico(static_site_config(site.root(), "", "[mime]\nfoo = \"application/x-foo\"\ngz = \"application/gzip\"\n"));

    for (const Expected& e : expected) {
        INFO(e.file);
        auto response = request(portico.port(), "GET", "/" + e.file);
        REQUIRE(response);
        CHECK(response->status == 200);
        CHECK(response->body == "content of " + e.file);
        if (e.exact)
            CHECK(response->header("content-type") == e.type);
        else
            CHECK(starts_with(response->header("content-type"), e.type));
    }
}

TEST_CASE("static: If-None-Match and If-Modified-Since give 304", "[static]") {
    Site site;
    set_mtime(site.write("page.html", index_body), fixed_mtime);
    site.write("small.txt", "small\n");
    Portico portico(static_site_config(site.root()));
    const uint16_t port = portico.port();
    const std::string etag = expected_etag(fixed_mtime, index_body.size());
    const std::string last_modified = http_date(fixed_mtime);

    auto plain = request(port, "GET", "/page.html");
    REQUIRE(plain);
    REQUIRE(plain->header("etag") == etag);
    REQUIRE(plain->header("last-modified") == last_modified);

    struct Case {
        std::string headers;
        int status;
    };
    const std::vector<Case> cases = {
        {"If-None-Match: " + etag + "\r\n", 304},
        {"If-None-Match: \"nope\", " + etag + ", \"other\"\r\n", 304},
        {"If-None-Match: *\r\n", 304},
        {"If-None-Match: W/" + etag + "\r\n", 304},
        {"If-None-Match: \"other\"\r\n", 200},
        {"If-Modified-Since: " + last_modified + "\r\n", 304},
        {"If-Modified-Since: " + http_date(fixed_mtime - 3600) + "\r\n", 200},
        {"If-Modified-Since: not a date\r\n", 200},
        // If-None-Match decides when present.
        {"If-None-Match: \"other\"\r\nIf-Modified-Since: " + last_modified + "\r\n", 200},
        {"If-None-Match: " + etag + "\r\nIf-Modified-Since: " + http_date(fixed_mtime - 3600) +
             "\r\n",
         304},
    };
    for (const Case& c : cases) {
        INFO(c.headers);
        // Pipelined with a second request: a 304 that carried body bytes
        // would corrupt the next response on the connection.
        Client client(port);
        client.send("GET /page.html HTTP/1.1\r\nHost: t\r\n" + c.headers +
                    "\r\nGET /small.txt HTTP/1.1\r\nHost: t\r\n\r\n");
        auto response = client.read_response();
        REQUIRE(response);
        CHECK(response->status == c.status);
        if (c.status == 304) {
            CHECK(response->header("etag") == etag);
            CHECK(response->body.empty());
            // Content-Length on a 304, if any, is the 200's (RFC 9110 8.6).
            const std::string length = response->header("content-length");
            CHECK((length.empty() || length == std::to_string(index_body.size())));
        } else {
            CHECK(response->body == index_body);
        }
        auto next = client.read_response();
        REQUIRE(next);
        CHECK(next->status == 200);
        CHECK(next->body == "small\n");
    }

    // HEAD honours the validators too.
    auto head = request(port, "HEAD", "/page.html", "If-None-Match: " + etag + "\r\n");
    REQUIRE(head);
    CHECK(head->status == 304);
}

TEST_CASE("static: a changed file gets new validators", "[static]") {
    Site site;
    const std::string path = site.write("v.txt", "version one\n");
    set_mtime(path, fixed_mtime);
    Portico portico(static_site_config(site.root()));

    auto first = request(portico.port(), "GET", "/v.txt");
    REQUIRE(first);
    CHECK(first->header("etag") == expected_etag(fixed_mtime, 12));

    site.write("v.txt", "version two, longer\n");
    set_mtime(path, fixed_mtime + 100);
    // Any cache of open files or stat results must notice within a second or so.
    std::optional<Response> second;
    for (int attempt = 0; attempt < 30; ++attempt) {
        second = request(portico.port(), "GET", "/v.txt");
        REQUIRE(second);
        if (second->body == "version two, longer\n") break;
        std::this_thread::sleep_for(100ms);
    }
    CHECK(second->body == "version two, longer\n");
    CHECK(second->header("content-length") == "20");
    CHECK(second->header("etag") == expected_etag(fixed_mtime + 100, 20));
    CHECK(second->header("last-modified") == http_date(fixed_mtime + 100));
    // The old tag no longer validates.
    auto conditional = request(portico.port(), "GET", "/v.txt",
                               "If-None-Match: " + first->header("etag") + "\r\n");
    REQUIRE(conditional);
    CHECK(conditional->status == 200);
}

TEST_CASE("static: Range requests", "[static]") {
    Site site;
    set_mtime(site.write("range.txt", alphabet), fixed_mtime);
    const std::string size = std::to_string(alphabet.size());
    Portico portico(static_site_config(site.root()));
    const uint16_t port = portico.port();

    struct Case {
        std::string range;
        int status;
        std::string content_range;
        std::string body;
    };
    const std::vector<Case> cases = {
        {"bytes=0-9", 206, "bytes 0-9/36", "0123456789"},
        {"bytes=10-", 206, "bytes 10-35/36", alphabet.substr(10)},
        {"bytes=-5", 206, "bytes 31-35/36", "vwxyz"},
        {"bytes=35-35", 206, "bytes 35-35/36", "z"},
        {"bytes=30-100", 206, "bytes 30-35/36", "uvwxyz"},
        {"bytes=-100", 206, "bytes 0-35/36", alphabet},
        {"bytes=36-", 416, "bytes */36", ""},
        {"bytes=100-200", 416, "bytes */36", ""},
        {"bytes=0-1,5-6", 200, "", alphabet},
        {"bytes=a-b", 200, "", alphabet},
        {"bytes=5-2", 200, "", alphabet},
        {"items=0-9", 200, "", alphabet},
    };
    for (const Case& c : cases) {
        INFO("Range: " << c.range);
        // Pipelined with a follow-up, so a wrong Content-Length shows.
        Client client(port);
        client.send("GET /range.txt HTTP/1.1\r\nHost: t\r\nRange: " + c.range +
                    "\r\n\r\nGET /range.txt HTTP/1.1\r\nHost: t\r\n\r\n");
        auto response = client.read_response();
        REQUIRE(response);
        CHECK(response->status == c.status);
        CHECK(response->header("content-range") == c.content_range);
        if (c.status != 416) {
            CHECK(response->body == c.body);
            CHECK(response->header("content-length") == std::to_string(c.body.size()));
            CHECK(starts_with(response->header("content-type"), "text/plain"));
        }
        if (c.status == 200) CHECK(response->header("accept-ranges") == "bytes");
        auto next = client.read_response();
        REQUIRE(next);
        CHECK(next->status == 200);
        CHECK(next->body == alphabet);
    }

    // If-Range: the range applies only while the validator still matches.
    const std::string etag = expected_etag(fixed_mtime, alphabet.size());
    struct IfRange {
        std::string value;
        int status;
    };
    const std::vector<IfRange> if_ranges = {
        {etag, 206},
        {"\"wrong\"", 200},
        {"W/" + etag, 200},
        {http_date(fixed_mtime), 206},
        {http_date(fixed_mtime - 60), 200},
    };
    for (const IfRange& c : if_ranges) {
        INFO("If-Range: " << c.value);
        auto response = request(port, "GET", "/range.txt",
                                "Range: bytes=0-9\r\nIf-Range: " + c.value + "\r\n");
        REQUIRE(response);
        CHECK(response->status == c.status);
        CHECK(response->body == (c.status == 206 ? "0123456789" : alphabet));
        CHECK(response->header("content-range") == (c.status == 206 ? "bytes 0-9/" + size : ""));
    }

    // Numbers too big for 64 bits: the whole file (as 200 or 206), never 500
    // or a wrapped-around range.
    for (const std::string range : {"bytes=0-99999999999999999999999", "bytes=-99999999999999999999999"}) {
        INFO("Range: " << range);
        auto response = request(port, "GET", "/range.txt", "Range: " + range + "\r\n");
        REQUIRE(response);
        CHECK((response->status == 200 || response->status == 206));
        CHECK(response->body == alphabet);
    }
    auto huge_first = request(port, "GET", "/range.txt", "Range: bytes=18446744073709551616-\r\n");
    REQUIRE(huge_first);
    CHECK((huge_first->status == 200 || huge_first->status == 416));
    if (huge_first->status == 200) CHECK(huge_first->body == alphabet);

    // Range is ignored where there is no file to cut.
    auto missing = request(port, "GET", "/missing.txt", "Range: bytes=0-1\r\n");
    REQUIRE(missing);
    CHECK(missing->status == 404);
    // If-Range without Range changes nothing.
    auto lone_if_range = request(port, "GET", "/range.txt", "If-Range: \"wrong\"\r\n");
    REQUIRE(lone_if_range);
    CHECK(lone_if_range->status == 200);
    CHECK(lone_if_range->body == alphabet);

    // Preconditions come before Range: a matching If-None-Match is a 304.
    auto not_modified = request(port, "GET", "/range.txt",
                                "Range: bytes=0-9\r\nIf-None-Match: " + etag + "\r\n");
    REQUIRE(not_modified);
    CHECK(not_modified->status == 304);
}

TEST_CASE("static: gzip_static sends FILE.gz to clients that accept gzip", "[static]") {
    Site site;
    const std::string plain = "console.log('the plain file');\n";
    // Adjacent literals: "\x01" "bytes" keeps the b out of the hex escape.
    const std::string gzipped("\x1f\x8b\x08\x00pretend-gzip\x00\xff\x01" "bytes", 25);
    site.write("app.js", plain);
    site.write("app.js.gz", gzipped);
    site.write("style.css", "body{}\n");  // no .gz next to it
    Portico portico(static_site_config(site.root(), "gzip_static = true\n"));
    const uint16_t port = portico.port();

    SECTION("accepted and present: the .gz bytes with Content-Encoding: gzip") {
        for (const std::string accept : {"gzip", "gzip, deflate, br", "br;q=1, gzip;q=0.5", "*"}) {
            INFO("Accept-Encoding: " << accept);
            auto response = request(port, "GET", "/app.js", "Accept-Encoding: " + accept + "\r\n");
            REQUIRE(response);
            CHECK(response->status == 200);
            CHECK((response->body == gzipped));
            CHECK(response->header("content-length") == std::to_string(gzipped.size()));
            CHECK(response->header("content-encoding") == "gzip");
            CHECK(response->header("content-type") == "text/javascript; charset=utf-8");
            CHECK(contains(response->header("vary"), "Accept-Encoding"));
        }
        auto head = request(port, "HEAD", "/app.js", "Accept-Encoding: gzip\r\n");
        REQUIRE(head);
        CHECK(head->status == 200);
        CHECK(head->header("content-length") == std::to_string(gzipped.size()));
        CHECK(head->header("content-encoding") == "gzip");
    }
    SECTION("not accepted: the plain file, still with Vary") {
        for (const std::string headers :
             {"", "Accept-Encoding: gzip;q=0\r\n", "Accept-Encoding: deflate, br\r\n",
              "Accept-Encoding: identity\r\n"}) {
            INFO(headers);
            auto response = request(port, "GET", "/app.js", headers);
            REQUIRE(response);
            CHECK(response->status == 200);
            CHECK(response->body == plain);
            CHECK(response->header("content-encoding").empty());
            CHECK(contains(response->header("vary"), "Accept-Encoding"));
        }
    }
    SECTION("no .gz on disk: the plain file") {
        auto response = request(port, "GET", "/style.css", "Accept-Encoding: gzip\r\n");
        REQUIRE(response);
        CHECK(response->status == 200);
        CHECK(response->body == "body{}\n");
        CHECK(response->header("content-encoding").empty());
        CHECK(contains(response->header("vary"), "Accept-Encoding"));
    }
    SECTION("a Range applies to the representation sent, never mixing the two") {
        auto response = request(port, "GET", "/app.js", "Accept-Encoding: gzip\r\nRange: bytes=0-4\r\n");
        REQUIRE(response);
        CHECK(response->header("content-encoding") == "gzip");
        if (response->status == 206) {
            CHECK((response->body == gzipped.substr(0, 5)));
            CHECK(response->header("content-range") == "bytes 0-4/" + std::to_string(gzipped.size()));
        } else {
            CHECK(response->status == 200);
            CHECK((response->body == gzipped));
        }
        auto identity = request(port, "GET", "/app.js", "Range: bytes=0-4\r\n");
        REQUIRE(identity);
        CHECK(identity->status == 206);
        CHECK(identity->body == plain.substr(0, 5));
        CHECK(identity->header("content-range") == "bytes 0-4/" + std::to_string(plain.size()));
        CHECK(identity->header("content-encoding").empty());
    }
    SECTION("the two representations have different ETags") {
        auto gz = request(port, "GET", "/app.js", "Accept-Encoding: gzip\r\n");
        auto identity = request(port, "GET", "/app.js");
        REQUIRE(gz);
        REQUIRE(identity);
        CHECK_FALSE(gz->header("etag").empty());
        CHECK(gz->header("etag") != identity->header("etag"));
        // ...and a 304 for the gzip one keeps Vary.
        auto revalidated = request(port, "GET", "/app.js",
                                   "Accept-Encoding: gzip\r\nIf-None-Match: " +
                                       gz->header("etag") + "\r\n");
        REQUIRE(revalidated);
        CHECK(revalidated->status == 304);
        CHECK(contains(revalidated->header("vary"), "Accept-Encoding"));
    }
}

TEST_CASE("static: without gzip_static the .gz file is never substituted", "[static]") {
    Site site;
    site.write("app.js", "plain\n");
    site.write("app.js.gz", "not-this");
    Portico portico(static_site_config(site.root()));
    auto response = request(portico.port(), "GET", "/app.js", "Accept-Encoding: gzip\r\n");
    REQUIRE(response);
    CHECK(response->status == 200);
    CHECK(response->body == "plain\n");
    CHECK(response->header("content-encoding").empty());
}

TEST_CASE("static: cache_control and headers are added", "[static]") {
    Site site;
    set_mtime(site.write("page.html", index_body), fixed_mtime);
    Portico portico(static_site_config(site.root(),
                               "cache_control = \"public, max-age=60\"\n"
                               "headers = { \"X-Frame-Options\" = \"DENY\", \"X-Test\" = \"yes\" }\n"));
    const uint16_t port = portico.port();

    auto response = request(port, "GET", "/page.html");
    REQUIRE(response);
    CHECK(response->status == 200);
    CHECK(response->header("cache-control") == "public, max-age=60");
    CHECK(response->header("x-frame-options") == "DENY");
    CHECK(response->header("x-test") == "yes");

    // A 304 repeats Cache-Control (RFC 9110 15.4.5).
    auto revalidated = request(port, "GET", "/page.html",
                               "If-None-Match: " + response->header("etag") + "\r\n");
    REQUIRE(revalidated);
    CHECK(revalidated->status == 304);
    CHECK(revalidated->header("cache-control") == "public, max-age=60");
    CHECK(revalidated->header("x-test") == "yes");

    auto partial = request(port, "GET", "/page.html", "Range: bytes=0-1\r\n");
    REQUIRE(partial);
    CHECK(partial->status == 206);
    CHECK(partial->header("cache-control") == "public, max-age=60");
    CHECK(partial->header("x-test") == "yes");

    // Not on a 404 (nginx's add_header; headers_always adds them there:
    // tests/integration/proxy_rules_test.cpp).
    auto missing = request(port, "GET", "/missing.html");
    REQUIRE(missing);
    CHECK(missing->status == 404);
    CHECK(missing->header("x-frame-options").empty());
    CHECK(missing->header("x-test").empty());
}

TEST_CASE("static: a 5 MiB file whole, in ranges, and by HEAD", "[static]") {
    Site site;
    const size_t size = 5 * 1024 * 1024;
    const std::string content = random_bytes(size, 20240501);
    site.write("big.bin", content);
    site.write("small.txt", "small\n");
    Portico portico(static_site_config(site.root()));
    const uint16_t port = portico.port();

    auto whole = request(port, "GET", "/big.bin", "", 20s);
    REQUIRE(whole);
    CHECK(whole->status == 200);
    CHECK(whole->header("content-length") == std::to_string(size));
    REQUIRE(whole->body.size() == size);
    CHECK((whole->body == content));

    const size_t first = 2 * 1024 * 1024 + 12345;
    const size_t last = first + 100000 - 1;
    auto middle = request(port, "GET", "/big.bin",
                          "Range: bytes=" + std::to_string(first) + "-" + std::to_string(last) +
                              "\r\n",
                          20s);
    REQUIRE(middle);
    CHECK(middle->status == 206);
    CHECK(middle->header("content-range") == "bytes " + std::to_string(first) + "-" +
                                                  std::to_string(last) + "/" +
                                                  std::to_string(size));
    REQUIRE(middle->body.size() == last - first + 1);
    CHECK((middle->body == content.substr(first, last - first + 1)));

    auto tail = request(port, "GET", "/big.bin", "Range: bytes=-70000\r\n", 20s);
    REQUIRE(tail);
    CHECK(tail->status == 206);
    REQUIRE(tail->body.size() == 70000);
    CHECK((tail->body == content.substr(size - 70000)));

    // HEAD: the length, no body: the next response on the connection is intact.
    Client client(port);
    client.send("HEAD /big.bin HTTP/1.1\r\nHost: t\r\n\r\nGET /small.txt HTTP/1.1\r\nHost: t\r\n\r\n");
    auto head = client.read_response(5s, true);
    REQUIRE(head);
    CHECK(head->status == 200);
    CHECK(head->header("content-length") == std::to_string(size));
    auto next = client.read_response();
    REQUIRE(next);
    CHECK(next->status == 200);
    CHECK(next->body == "small\n");
}

TEST_CASE("static: HEAD answers like GET without the body", "[static]") {
    Site site;
    site.write("index.html", index_body);
    site.write("range.txt", alphabet);
    site.write("docs/index.html", "docs\n");
    fs::create_directories(site.root() + "/empty");
    Portico portico(static_site_config(site.root(), "cache_control = \"no-cache\"\n"));
    const uint16_t port = portico.port();

    struct Case {
        std::string target;
        std::string headers;
    };
    const std::vector<Case> cases = {
        {"/index.html", ""}, {"/", ""},       {"/range.txt", ""},
        {"/docs", ""},       {"/empty/", ""}, {"/missing", ""},
        {"/range.txt", "If-None-Match: *\r\n"},
    };
    for (const Case& c : cases) {
        INFO(c.target << " " << c.headers);
        auto get = request(port, "GET", c.target, c.headers);
        // HEAD and then a GET on the same connection: HEAD must send no body.
        Client client(port);
        client.send("HEAD " + c.target + " HTTP/1.1\r\nHost: t\r\n" + c.headers +
                    "\r\nGET /range.txt HTTP/1.1\r\nHost: t\r\n\r\n");
        auto head = client.read_response(5s, true);
        REQUIRE(get);
        REQUIRE(head);
        CHECK(head->status == get->status);
        auto get_headers = get->headers;
        auto head_headers = head->headers;
        get_headers.erase("date");
        head_headers.erase("date");
        CHECK(head_headers == get_headers);
        auto next = client.read_response();
        REQUIRE(next);
        CHECK(next->status == 200);
        CHECK(next->body == alphabet);
    }

    // Range is defined for GET only (RFC 9110 14.2), so HEAD may ignore it;
    // either way the head describes what a GET would send, and no body follows.
    for (const std::string range : {"bytes=2-5", "bytes=99-"}) {
        INFO("HEAD with Range: " << range);
        Client client(port);
        client.send("HEAD /range.txt HTTP/1.1\r\nHost: t\r\nRange: " + range +
                    "\r\n\r\nGET /range.txt HTTP/1.1\r\nHost: t\r\n\r\n");
        auto head = client.read_response(5s, true);
        REQUIRE(head);
        if (head->status == 200) {
            CHECK(head->header("content-length") == std::to_string(alphabet.size()));
            CHECK(head->header("content-range").empty());
        } else {
            auto get = request(port, "GET", "/range.txt", "Range: " + range + "\r\n");
            REQUIRE(get);
            CHECK(head->status == get->status);
            CHECK(head->header("content-range") == get->header("content-range"));
        }
        auto next = client.read_response();
        REQUIRE(next);
        CHECK(next->status == 200);
        CHECK(next->body == alphabet);
    }
}

TEST_CASE("static: pipelined static responses keep their framing", "[static]") {
    Site site;
    set_mtime(site.write("range.txt", alphabet), fixed_mtime);
    site.write("docs/index.html", "docs\n");
    Portico portico(static_site_config(site.root()));
    Client client(portico.port());
    const std::string etag = expected_etag(fixed_mtime, alphabet.size());
    client.send("GET /range.txt HTTP/1.1\r\nHost: t\r\nRange: bytes=1-3\r\n\r\n"
                "GET /range.txt HTTP/1.1\r\nHost: t\r\nIf-None-Match: " + etag + "\r\n\r\n"
                "GET /nothing HTTP/1.1\r\nHost: t\r\n\r\n"
                "GET /docs HTTP/1.1\r\nHost: t\r\n\r\n"
                "GET /range.txt HTTP/1.1\r\nHost: t\r\nRange: bytes=50-\r\n\r\n"
                "HEAD /range.txt HTTP/1.1\r\nHost: t\r\n\r\n"
                "GET /docs/ HTTP/1.1\r\nHost: t\r\n\r\n");
    auto r1 = client.read_response();
    REQUIRE(r1);
    CHECK(r1->status == 206);
    CHECK(r1->body == "123");
    auto r2 = client.read_response();
    REQUIRE(r2);
    CHECK(r2->status == 304);
    auto r3 = client.read_response();
    REQUIRE(r3);
    CHECK(r3->status == 404);
    auto r4 = client.read_response();
    REQUIRE(r4);
    CHECK(r4->status == 301);
    auto r5 = client.read_response();
    REQUIRE(r5);
    CHECK(r5->status == 416);
    auto r6 = client.read_response(5s, true);
    REQUIRE(r6);
    CHECK(r6->status == 200);
    auto r7 = client.read_response();
    REQUIRE(r7);
    CHECK(r7->status == 200);
    CHECK(r7->body == "docs\n");
}

TEST_CASE("static: a slow reader of a large file does not stall its worker", "[static]") {
    Site site;
    const size_t size = 32 * 1024 * 1024;
    const std::string content = random_bytes(size, 77);
    site.write("huge.bin", content);
    site.write("small.txt", "small\n");
    Portico portico(static_site_config(site.root()));  // workers = 1
    const uint16_t port = portico.port();

    // Asks for 32 MiB and reads nothing, through a tiny receive buffer.
    Client slow(port, 4096);
    slow.send("GET /huge.bin HTTP/1.1\r\nHost: t\r\n\r\n");
    std::this_thread::sleep_for(300ms);

    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 20; ++i) {
        INFO("fetch " << i);
        const auto before = std::chrono::steady_clock::now();
        auto response = request(port, "GET", "/small.txt", "", 2s);
        REQUIRE(response);
        CHECK(response->status == 200);
        CHECK(response->body == "small\n");
        CHECK(std::chrono::steady_clock::now() - before < 1s);
    }
    CHECK(std::chrono::steady_clock::now() - start < 5s);

    // The slow client then gets every byte, in order.
    auto big = slow.read_response(60s);
    REQUIRE(big);
    CHECK(big->status == 200);
    REQUIRE(big->body.size() == size);
    CHECK((big->body == content));
}

TEST_CASE("static: fast readers of a large file share the worker with each other and small requests",
          "[static]") {
    // A fast reader's socket is always writable: only the output queue's
    // share per flush (max_bytes_per_flush) lets the others in. Two clients
    // read 4 pipelined copies of a 24 MiB file as fast as they can, while
    // small requests must still be answered at once; both big readers end.
    Site site;
    const size_t size = 24 * 1024 * 1024;
    const std::string content = random_bytes(size, 91);
    site.write("large.bin", content);
    site.write("small.txt", "small\n");
    Portico portico(static_site_config(site.root()));  // workers = 1
    const uint16_t port = portico.port();

    constexpr int copies = 4;
    auto read_copies = [&](int& complete) {
        Client client(port);
        std::string requests;
        for (int i = 0; i < copies; ++i) requests += "GET /large.bin HTTP/1.1\r\nHost: t\r\n\r\n";
        client.send(requests);
        for (int i = 0; i < copies; ++i) {
            auto response = client.read_response(60s);
            if (!response || response->status != 200 || response->body != content) return;
            ++complete;
        }
    };
    int first = 0, second = 0;
    std::thread reader1(read_copies, std::ref(first));
    std::thread reader2(read_copies, std::ref(second));
    std::this_thread::sleep_for(50ms);
    for (int i = 0; i < 10; ++i) {
        INFO("fetch " << i);
        const auto before = std::chrono::steady_clock::now();
        auto response = request(port, "GET", "/small.txt", "", 2s);
        REQUIRE(response);
        CHECK(response->body == "small\n");
        CHECK(std::chrono::steady_clock::now() - before < 1s);
    }
    reader1.join();
    reader2.join();
    CHECK(first == copies);
    CHECK(second == copies);
}

TEST_CASE("static: under a prefix location the whole path is appended to root", "[static]") {
    // nginx `root`: /static/a.txt is served from ROOT/static/a.txt.
    Site site;
    site.write("static/a.txt", "under static\n");
    site.write("static/dir/index.html", "static dir\n");
    site.write("b.txt", "top level\n");
    site.dir.write("secret.txt", "OUTSIDE-ROOT-MARKER\n");
    Portico portico("[server]\nlisten = [\"{listen}\"]\nworkers = 1\n\n"
                    "[[location]]\nprefix = \"/static/\"\nroot = '" + site.root() + "'\n\n"
                    "[[location]]\nprefix = \"/\"\nrespond = { status = 200, body = \"fallback\\n\" }\n");
    const uint16_t port = portico.port();

    auto response = request(port, "GET", "/static/a.txt");
    REQUIRE(response);
    CHECK(response->status == 200);
    CHECK(response->body == "under static\n");

    response = request(port, "GET", "/static/dir");
    REQUIRE(response);
    CHECK(response->status == 301);
    CHECK(response->header("location") == "/static/dir/");

    response = request(port, "GET", "/static/dir/");
    REQUIRE(response);
    CHECK(response->status == 200);
    CHECK(response->body == "static dir\n");

    response = request(port, "GET", "/static/missing.txt");
    REQUIRE(response);
    CHECK(response->status == 404);

    // Not under the prefix: the other location.
    response = request(port, "GET", "/b.txt");
    REQUIRE(response);
    CHECK(response->body == "fallback\n");

    // Climbing out through the prefix.
    for (const std::string target :
         {"/static/../../secret.txt", "/static/%2e%2e/%2e%2e/secret.txt", "/static/..%2f..%2fsecret.txt"}) {
        INFO(target);
        response = request(port, "GET", target);
        REQUIRE(response);
        CHECK(response->status == 400);
        CHECK_FALSE(contains(response->body, "OUTSIDE-ROOT-MARKER"));
    }
}

TEST_CASE("static: a file that shrinks under a cached length is cut off, never padded or hung",
          "[static]") {
    Site site;
    const std::string big = random_bytes(1024 * 1024, 5);
    const std::string path = site.write("shrinking.bin", big);
    site.write("small.txt", "small\n");
    Portico portico(static_site_config(site.root()));
    const uint16_t port = portico.port();

    auto first = request(port, "GET", "/shrinking.bin", "", 10s);
    REQUIRE(first);
    REQUIRE(first->status == 200);
    CHECK((first->body == big));

    // Truncated in place right away: a cache of stat results may still
    // announce the old length. The response must then end early with the
    // connection closed (never zero-filled, never hanging), or be the new file.
    REQUIRE(::truncate(path.c_str(), 10) == 0);
    Client client(port);
    client.send("GET /shrinking.bin HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    auto raw = client.read_until_close(5s);
    REQUIRE(raw);
    const size_t end = raw->find("\r\n\r\n");
    REQUIRE(end != std::string::npos);
    const std::string body = raw->substr(end + 4);
    INFO(raw->substr(0, end));
    CHECK(body.size() <= 10);
    CHECK((body == big.substr(0, body.size())));
    if (contains(raw->substr(0, end), "Content-Length: 10\r\n")) CHECK(body.size() == 10);

    auto next = request(port, "GET", "/small.txt");
    REQUIRE(next);
    CHECK(next->status == 200);
    CHECK(next->body == "small\n");
}
