#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "config/config.hpp"
#include "router/router.hpp"

using portico::config::LocationConfig;
using portico::config::MatchKind;
using portico::router::Router;

namespace {

LocationConfig location(MatchKind match, std::string pattern, bool stop_regex = false) {
    LocationConfig config;
    config.name = pattern;
    config.match = match;
    config.pattern = std::move(pattern);
    config.stop_regex = stop_regex;
    return config;
}

LocationConfig exact(std::string pattern) {
    return location(MatchKind::exact, std::move(pattern));
}

LocationConfig prefix(std::string pattern) {
    return location(MatchKind::prefix, std::move(pattern));
}

// nginx's "location ^~".
LocationConfig stop_prefix(std::string pattern) {
    return location(MatchKind::prefix, std::move(pattern), true);
}

LocationConfig regex(std::string pattern) {
    return location(MatchKind::regex, std::move(pattern));
}

// Every location, as one site's.
std::vector<size_t> every(const std::vector<LocationConfig>& locations) {
    std::vector<size_t> indices(locations.size());
    for (size_t i = 0; i < indices.size(); ++i) indices[i] = i;
    return indices;
}

}  // namespace

// The example from nginx's documentation of the `location` directive.
TEST_CASE("Router: nginx's documented example", "[router]") {
    const std::vector<LocationConfig> locations{
        exact("/"),                         // A
        prefix("/"),                        // B
        prefix("/documents/"),              // C
        stop_prefix("/images/"),            // D
        regex(R"((?i)\.(gif|jpg|jpeg)$)"),  // E
    };
    const Router router(locations, every(locations));
    constexpr int A = 0, B = 1, C = 2, D = 3, E = 4;

    CHECK(router.match("/") == A);
    CHECK(router.match("/index.html") == B);
    CHECK(router.match("/documents/document.html") == C);
    CHECK(router.match("/images/1.gif") == D);
    CHECK(router.match("/documents/1.jpg") == E);
    CHECK(router.match("/documents/1.JPG") == E);
}

TEST_CASE("Router: exact beats a stop_regex prefix and a regex", "[router]") {
    const std::vector<LocationConfig> locations{
        stop_prefix("/api"),
        regex("^/api/health$"),
        exact("/api/health"),
    };
    const Router router(locations, every(locations));

    CHECK(router.match("/api/health") == 2);
    CHECK(router.match("/api/health/") == 0);
}

TEST_CASE("Router: regexes are tried in file order", "[router]") {
    const std::vector<LocationConfig> locations{
        regex(R"(\.php$)"),
        regex(R"(^/admin/)"),
    };
    const Router router(locations, every(locations));

    CHECK(router.match("/admin/index.php") == 0);
    CHECK(router.match("/admin/users") == 1);
}

TEST_CASE("Router: regexes match anywhere in the path", "[router]") {
    const std::vector<LocationConfig> locations{regex("/private/")};
    const Router router(locations, every(locations));

    CHECK(router.match("/a/private/b") == 0);
    CHECK(router.match("/a/public/b") == -1);
}

TEST_CASE("Router: longest prefix when no regex matches", "[router]") {
    const std::vector<LocationConfig> locations{
        prefix("/"),
        prefix("/static/"),
        prefix("/static/img/"),
        regex(R"(\.php$)"),
    };
    const Router router(locations, every(locations));

    CHECK(router.match("/static/img/logo.png") == 2);
    CHECK(router.match("/static/app.js") == 1);
    CHECK(router.match("/other") == 0);
    CHECK(router.match("/static/img/x.php") == 3);
}

TEST_CASE("Router: a stop_regex prefix only wins when it is the longest", "[router]") {
    const std::vector<LocationConfig> locations{
        stop_prefix("/static/"),
        prefix("/static/uploads/"),
        regex(R"(\.php$)"),
    };
    const Router router(locations, every(locations));

    CHECK(router.match("/static/a.php") == 0);
    CHECK(router.match("/static/uploads/a.php") == 2);
    CHECK(router.match("/static/uploads/a.png") == 1);
}

TEST_CASE("Router: no matching location gives -1", "[router]") {
    const std::vector<LocationConfig> locations{
        exact("/health"),
        prefix("/api/"),
        regex(R"(\.css$)"),
    };
    const Router router(locations, every(locations));

    CHECK(router.match("/") == -1);
    CHECK(router.match("/health/") == -1);
    CHECK(router.match("/ap") == -1);

    const std::vector<LocationConfig> none;
    CHECK(Router(none, {}).match("/") == -1);
}

TEST_CASE("Router: prefixes compare bytes, not segments", "[router]") {
    const std::vector<LocationConfig> locations{prefix("/images")};
    const Router router(locations, every(locations));

    CHECK(router.match("/images") == 0);
    CHECK(router.match("/images/a.png") == 0);
    CHECK(router.match("/images123") == 0);
    CHECK(router.match("/image") == -1);
    CHECK(router.match("/Images") == -1);
}

TEST_CASE("Router: the first duplicate in file order wins", "[router]") {
    const std::vector<LocationConfig> locations{
        exact("/x"),
        exact("/x"),
        prefix("/p/"),
        prefix("/p/"),
    };
    const Router router(locations, every(locations));

    CHECK(router.match("/x") == 0);
    CHECK(router.match("/p/q") == 2);
}

TEST_CASE("Router: a regex that does not compile is skipped", "[router]") {
    const std::vector<LocationConfig> locations{
        regex("(unclosed"),
        regex("a"),
    };
    const Router router(locations, every(locations));

    CHECK(router.match("/a") == 1);
}

TEST_CASE("Router: a site's router sees only its locations and answers their global index",
          "[router]") {
    const std::vector<LocationConfig> locations{prefix("/"), prefix("/"), exact("/a"),
                                                prefix("/b/")};
    const Router second_site(locations, {1, 3});
    CHECK(second_site.match("/a") == 1);
    CHECK(second_site.match("/b/x") == 3);
    const Router first_site(locations, {0, 2});
    CHECK(first_site.match("/a") == 2);
    CHECK(first_site.match("/b/x") == 0);
}
