// redirect, rewrite, respond 444 and error_pages: each broken value is a
// `portico -t` error at its line and column, and the good ones load.
#include <catch2/catch.hpp>

#include "config/config.hpp"

using portico::config::LoadResult;
using portico::config::parse_config;

// Its own namespace: in a unity build the test files share one translation
// unit, and their helpers (Answer, fake_path...) must not meet.
namespace config_rules_errors_test {

namespace {

constexpr const char* fake_path = "/nonexistent-portico-conf/portico.toml";

std::string with_location(const std::string& location) {
    return "[server]\nlisten = [\"127.0.0.1:0\"]\n\n[[location]]\n" + location;
}

struct BrokenRule {
    const char* what;
    const char* location;  // from line 5 of the file
    const char* at;        // "LINE:COL"
    const char* message;
};

const BrokenRule broken_rules[] = {
    {"an unknown variable in redirect.to",
     "prefix = \"/a/\"\nredirect = { to = \"https://x$nope\", status = 301 }\n", "6:29",
     "redirect.to: unknown variable '$nope'"},
    {"a redirect status that is not a redirect",
     "prefix = \"/a/\"\nredirect = { to = \"/x\", status = 300 }\n", "6:34",
     "redirect.status: expected 301, 302, 303, 307 or 308, got 300"},
    {"a redirect status as a string",
     "prefix = \"/a/\"\nredirect = { to = \"/x\", status = \"301\" }\n", "6:34",
     "redirect.status: expected 301, 302, 303, 307 or 308"},
    {"a redirect without to", "prefix = \"/a/\"\nredirect = { status = 301 }\n", "6:12",
     "redirect.to is required"},
    {"a redirect beside a root", "prefix = \"/a/\"\nroot = \"/\"\nredirect = { to = \"/x\" }\n",
     "7:12", "redirect answers every request: it cannot be combined with root"},
    {"a redirect beside a rewrite",
     "prefix = \"/a/\"\nrewrite = [{ from = '^/a', to = '/b' }]\nredirect = { to = \"/x\" }\n",
     "7:12", "cannot be combined with root, alias, proxy, respond"},
    {"a redirect that is not a table", "prefix = \"/a/\"\nredirect = \"/x\"\n", "6:12",
     "redirect: expected a table"},
    {"a capture a regex location does not have",
     "regex = '^/j/(.*)$'\nredirect = { to = \"/k/$1$2\" }\n", "6:25",
     "redirect.to: '$2': the regex has only 1 group(s)"},
    {"a capture in the redirect of a prefix location",
     "prefix = \"/j/\"\nredirect = { to = \"/k/$1\" }\n", "6:23", "redirect.to: '$1'"},
    {"a rewrite regex RE2 rejects",
     "prefix = \"/d/\"\nrewrite = [{ from = '^/d/(.*', to = '/x' }]\n", "6:21",
     "rewrite.from: not a valid RE2 regular expression: missing )"},
    {"a capture from does not have",
     "prefix = \"/e/\"\nrewrite = [{ from = '^/e/(.*)$', to = '/x/$2' }]\n", "6:43",
     "rewrite.to: '$2': the regex has only 1 group(s)"},
    {"a named capture from does not have",
     "prefix = \"/e/\"\nrewrite = [{ from = '^/e/(?P<rest>.*)$', to = '/x/$other' }]\n", "6:51",
     "rewrite.to: unknown variable '$other'"},
    {"an unknown rewrite flag",
     "prefix = \"/f/\"\nrewrite = [{ from = '^/f/(.*)$', to = '/x/$1', flag = \"stop\" }]\n",
     "6:55", "rewrite.flag: expected one of \"last\", \"break\", \"redirect\", \"permanent\""},
    {"a rewrite without to", "prefix = \"/f/\"\nrewrite = [{ from = '^/f/' }]\n", "6:12",
     "rewrite.to is required"},
    {"a rewrite that is not an array of tables", "prefix = \"/f/\"\nrewrite = { from = '^/f/' }\n",
     "6:11", "rewrite: expected an array of rules"},
    {"an unknown key in a rewrite rule",
     "prefix = \"/f/\"\nrewrite = [{ from = '^/f/', to = '/', flags = \"last\" }]\n", "6:39",
     "unknown key 'flags'"},
    {"an error page for a status below 300",
     "prefix = \"/g/\"\nroot = \"/\"\nerror_pages = { 200 = \"/x\" }\n", "7:17",
     "error_pages.200: expected a status from 300 to 599"},
    {"an error page for something that is not a status",
     "prefix = \"/g/\"\nroot = \"/\"\nerror_pages = { not_found = \"/x\" }\n", "7:17",
     "error_pages.not_found: expected a status from 300 to 599"},
    {"an error page that is not a URI",
     "prefix = \"/g/\"\nroot = \"/\"\nerror_pages = { 404 = \"x.html\" }\n", "7:23",
     "error_pages.404: expected a URI starting with '/', got \"x.html\""},
    {"an unknown variable in an error page",
     "prefix = \"/g/\"\nroot = \"/\"\nerror_pages = { 502 = \"/$bad\" }\n", "7:25",
     "error_pages.502: unknown variable '$bad'"},
    {"error_pages that is not a table", "prefix = \"/g/\"\nroot = \"/\"\nerror_pages = \"/x\"\n",
     "7:15", "error_pages: expected a table"},
    {"a respond status out of range (444 is the only exception)",
     "prefix = \"/h/\"\nrespond = { status = 600 }\n", "6:22", "respond.status"},
    {"a location with nothing to do", "prefix = \"/l/\"\n", "4:1",
     "needs something to do: root, alias, proxy, respond, redirect or rewrite"},
};

std::string all_messages(const LoadResult& result) {
    std::string out;
    for (const auto& error : result.errors) out += "\n  " + error.to_string();
    return out;
}

}  // namespace

TEST_CASE("rules: each broken redirect, rewrite, respond or error_pages is reported at its place",
          "[config][rules]") {
    for (const BrokenRule& broken : broken_rules) {
        LoadResult result = parse_config(with_location(broken.location), fake_path);
        INFO("case: " << broken.what << "\nerrors:" << all_messages(result));
        CHECK_FALSE(result.config);
        // One problem, one message: a bad rule is not also "nothing to do".
        CHECK(result.errors.size() == 1);
        std::string expected_start = std::string(fake_path) + ":" + broken.at + ": ";
        bool found = false;
        for (const auto& error : result.errors) {
            std::string text = error.to_string();
            found = found || (text.starts_with(expected_start) &&
                              text.find(broken.message) != std::string::npos);
        }
        CHECK(found);
    }
}

TEST_CASE("rules: redirect, rewrite, respond 444 and error_pages load as written",
          "[config][rules]") {
    LoadResult result = parse_config(
        with_location(
            "prefix = \"/a/\"\nredirect = { to = \"https://example.com$request_uri\", "
            "status = 301 }\n\n"
            "[[location]]\nregex = '^/b/(?P<rest>.*)$'\nredirect = { to = \"/c/$rest\" }\n\n"
            "[[location]]\nprefix = \"/old/\"\nrewrite = [{ from = '^/old/(.*)$', to = "
            "'/new/$1', flag = \"permanent\" }, { from = '^/x', to = '/y?a=1' }]\n\n"
            "[[location]]\nprefix = \"/drop\"\nrespond = { status = 444 }\n\n"
            "[[location]]\nprefix = \"/\"\nroot = \"/\"\nerror_pages = { 404 = "
            "\"/404.html\", 503 = \"/maintenance.html?from=$uri\" }\n"),
        fake_path);
    INFO(all_messages(result));
    REQUIRE(result.config);
    const auto& locations = result.config->locations;
    REQUIRE(locations.size() == 5);
    REQUIRE(locations[0].redirect);
    CHECK(locations[0].redirect->status == 301);
    CHECK(locations[0].redirect->to.source == "https://example.com$request_uri");
    REQUIRE(locations[1].redirect);
    CHECK(locations[1].redirect->status == 302);  // nginx's `return URL`
    CHECK(locations[1].redirect->to.uses(portico::config::Variable::capture));
    REQUIRE(locations[2].rewrite.size() == 2);
    CHECK(locations[2].rewrite[0].flag == portico::config::RewriteFlag::permanent);
    CHECK(locations[2].rewrite[1].flag == portico::config::RewriteFlag::last);  // the default
    CHECK(locations[2].rewrite[1].where.line == 14);
    REQUIRE(locations[3].respond);
    CHECK(locations[3].respond->status == 444);
    REQUIRE(locations[4].error_pages.size() == 2);
    CHECK(locations[4].error_pages[0].first == 404);
    CHECK(locations[4].error_pages[1].first == 503);
    CHECK(locations[4].error_pages[1].second.uses(portico::config::Variable::uri));
}

}  // namespace config_rules_errors_test
