// The configs in conf/, as a new user runs them: they validate, the metrics
// listener is on (so `portico stats` works out of the box), and a browser's
// first requests (the page, its assets, /favicon.ico) are answered.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "proxy_support.hpp"
#include "upstream_server.hpp"

using namespace portico::test;

namespace {

const std::string source_dir = PORTICO_SOURCE_DIR;

void replace_all(std::string& text, const std::string& from, const std::string& to) {
    for (size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size())
        text.replace(at, from.size(), to);
}

// The shipped file with its fixed ports and the app's address swapped for
// ours, and its relative root made absolute (the copy lives elsewhere).
std::string shipped(const std::string& name, const std::string& app, uint16_t metrics_port) {
    std::string text = read_text(source_dir + "/conf/" + name);
    REQUIRE(!text.empty());
    replace_all(text, "127.0.0.1:8080", "{listen}");
    replace_all(text, "127.0.0.1:9145", "127.0.0.1:" + std::to_string(metrics_port));
    replace_all(text, "127.0.0.1:3000", app);
    replace_all(text, "\"../www\"", "\"" + source_dir + "/www\"");
    return text;
}

int validate(const std::string& path) {
    std::string command = std::string(PORTICO_BINARY) + " -t -c " + path + " >/dev/null 2>&1";
    return std::system(command.c_str());
}

}  // namespace

TEST_CASE("shipped configs validate as they are", "[config][shipped]") {
    CHECK(validate(source_dir + "/conf/portico.toml") == 0);
    CHECK(validate(source_dir + "/conf/proxy-only.toml") == 0);
}

TEST_CASE("conf/portico.toml: assets from disk (favicon included), the rest from the app, metrics on",
          "[config][shipped]") {
    UpstreamServer app;
    uint16_t metrics_port = unused_port();
    Portico portico(shipped("portico.toml", app.address(), metrics_port));
    for (const char* asset : {"/index.html", "/style.css", "/image.jpg", "/favicon.ico"}) {
        INFO(asset);
        auto response = proxy_fetch(portico.port(), get_request(asset));
        REQUIRE(response);
        CHECK(response->status == 200);
        CHECK(read_text(source_dir + "/www" + asset) == response->body);
    }
    auto favicon = proxy_fetch(portico.port(), get_request("/favicon.ico"));
    REQUIRE(favicon);
    CHECK(favicon->header("content-type") == "image/x-icon");
    CHECK(app.request_count() == 0);  // none of them reached the app

    auto page = proxy_fetch(portico.port(), get_request("/hello"));
    REQUIRE(page);
    CHECK(page->body == "ok /hello");
    auto health = proxy_fetch(portico.port(), get_request("/health"));
    REQUIRE(health);
    CHECK(health->body == "ok\n");
    auto healthz = proxy_fetch(metrics_port, get_request("/healthz", "", "127.0.0.1"));
    REQUIRE(healthz);
    CHECK(healthz->status == 200);
}

TEST_CASE("conf/proxy-only.toml: everything from the app, metrics on", "[config][shipped]") {
    UpstreamServer app;
    uint16_t metrics_port = unused_port();
    Portico portico(shipped("proxy-only.toml", app.address(), metrics_port));
    for (const char* path : {"/index.html", "/image.jpg", "/hello"}) {
        auto response = proxy_fetch(portico.port(), get_request(path));
        REQUIRE(response);
        CHECK(response->body == std::string("ok ") + path);
    }
    CHECK(app.request_count() == 3);
    CHECK(metric(metrics_port, "portico_connections_accepted_total") >= 3);
}
