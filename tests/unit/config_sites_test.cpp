// [[site]]: what a valid config reads into, each `-t` error at its line and
// column, and the choice of a site per listener (config::SiteNames,
// router::Sites).
#include <catch2/catch.hpp>

#include <string>

#include "config/config.hpp"
#include "config/site_names.hpp"
#include "router/sites.hpp"

using namespace portico::config;

// Its own namespace: in a unity build the test files share one translation
// unit, and their helpers (Answer, fake_path...) must not meet.
namespace config_sites_test {

namespace {

constexpr const char* fake_path = "/nonexistent-portico-conf/portico.toml";

Config load(const std::string& text) {
    LoadResult result = parse_config(text, fake_path);
    std::string messages;
    for (const ConfigError& error : result.errors) messages += error.to_string() + "\n";
    INFO(messages);
    REQUIRE(result.config);
    return std::move(*result.config);
}

struct BrokenSite {
    const char* what;
    const char* toml;
    const char* at;       // "LINE:COL"
    const char* message;  // a part of the message
};

#define SERVER "[server]\nlisten = [\"127.0.0.1:8080\", \"127.0.0.1:8081\"]\n"

const BrokenSite broken_sites[] = {
    {"two defaults on one listener, naming both lines",
     SERVER "[[site]]\nnames = [\"a.test\"]\ndefault = true\n"
            "[[site]]\nnames = [\"b.test\"]\ndefault = true\n",
     "8:11",
     "site.default: a second default site on 127.0.0.1:8080 (the first is the [[site]] on line 3)"},
    {"two defaults on different listeners are fine, a third is not",
     SERVER "[[site]]\nlisten = [\"127.0.0.1:8080\"]\ndefault = true\n"
            "[[site]]\nlisten = [\"127.0.0.1:8081\"]\ndefault = true\n"
            "[[site]]\ndefault = true\n",
     "10:11", "a second default site on 127.0.0.1:8080 (the first is the [[site]] on line 3)"},
    {"the same name twice on one listener",
     SERVER "[[site]]\nnames = [\"a.test\"]\n"
            "[[site]]\nnames = [\"x.test\", \"A.test.\"]\n",
     "6:20",
     "site.names: \"A.test.\" is already a name of the [[site]] on line 3, on 127.0.0.1:8080"},
    {"the same name twice in one site", SERVER "[[site]]\nnames = [\"*.a.test\", \"*.a.test\"]\n",
     "4:22", "already a name of the [[site]] on line 3"},
    {"top-level locations and a default site, naming both lines",
     SERVER "[[location]]\nprefix = \"/\"\nrespond = { status = 200 }\n"
            "[[site]]\nnames = [\"a.test\"]\ndefault = true\n",
     "8:11", "site.default: the top-level [[location]]s (line 3) make the site for every host"},
    {"a regex RE2 refuses", SERVER "[[site]]\nnames = [\"~^(.+\\\\.test$\"]\n", "4:10",
     "not a valid RE2 regular expression: missing ): ^(.+\\.test$"},
    {"an empty name", SERVER "[[site]]\nnames = [\"a.test\", \"\"]\n", "4:20",
     "site.names: \"\": expected an empty name"},
    {"a name with a port", SERVER "[[site]]\nnames = [\"a.test:8080\"]\n", "4:10",
     "expected a host name without a port"},
    {"a wildcard in the middle", SERVER "[[site]]\nnames = [\"www.*.test\"]\n", "4:10",
     "a leading wildcard \"*.example.com\""},
    {"listen that is not a listener",
     SERVER "[[site]]\nlisten = [\"127.0.0.1:8080\", \"127.0.0.1:9090\"]\n", "4:29",
     "site.listen: '127.0.0.1:9090' is not one of [server] or [tls] listen"},
    {"a certificate without [tls]",
     SERVER "[[site]]\ncertificate = { cert = \"a.pem\", key = \"a.key\" }\n", "4:15",
     "site.certificate: needs a [tls] section"},
    {"a certificate without its key", SERVER "[[site]]\ncertificate = { cert = \"a.pem\" }\n",
     "4:15", "site.certificate.key is required"},
    {"an unknown key in a site", SERVER "[[site]]\nname = [\"a.test\"]\n", "4:1",
     "unknown key 'name' in site '_'; did you mean 'names'?"},
    {"a site location is checked as any location",
     SERVER "[[site]]\nnames = [\"a.test\"]\n[[site.location]]\nprefix = \"/\"\n", "5:1",
     "location '/': needs something to do"},
    {"[site] instead of [[site]]", SERVER "[site]\nnames = [\"a.test\"]\n", "3:1",
     "site: expected [[site]] tables"},
};

std::string all_messages(const LoadResult& result) {
    std::string text;
    for (const ConfigError& error : result.errors) text += "\n  " + error.to_string();
    return text;
}

}  // namespace

TEST_CASE("each broken site is reported at its line and column", "[config][sites]") {
    for (const BrokenSite& broken : broken_sites) {
        LoadResult result = parse_config(broken.toml, fake_path);
        INFO("case: " << broken.what << "\nerrors:" << all_messages(result));
        CHECK_FALSE(result.config);
        std::string expected_start = std::string(fake_path) + ":" + broken.at + ": ";
        bool found = false;
        for (const ConfigError& error : result.errors) {
            std::string text = error.to_string();
            found = found || (text.starts_with(expected_start) &&
                              text.find(broken.message) != std::string::npos);
        }
        CHECK(found);
    }
}

TEST_CASE("sites read into names, listeners, default and their own locations", "[config][sites]") {
    Config config =
        load(SERVER
             "[[location]]\nprefix = \"/\"\nrespond = { status = 200 }\n"
             "[[site]]\n"
             "names = [\"Example.COM.\", \"*.example.com\", \"~^(?<sub>.+)\\\\.ex\\\\.test$\"]\n"
             "listen = [\"127.0.0.1:8081\"]\n"
             "[[site.location]]\nprefix = \"/\"\nrespond = { status = 200 }\n"
             "[[site.location]]\nregex = \"\\\\.php$\"\nrespond = { status = 200 }\n"
             "[[site]]\n"
             "[[site.location]]\nprefix = \"/\"\nname = \"other\"\nrespond = { status = 200 }\n");
    REQUIRE(config.sites.size() == 3);
    CHECK(config.sites[0].names.empty());
    CHECK(config.sites[0].locations == std::vector<size_t>{0});
    const SiteConfig& named = config.sites[1];
    REQUIRE(named.names.size() == 3);
    CHECK(named.names[0].kind == SiteName::Kind::exact);
    CHECK(named.names[0].text == "example.com");
    CHECK(named.names[1].kind == SiteName::Kind::wildcard);
    CHECK(named.names[1].text == ".example.com");
    CHECK(named.names[2].kind == SiteName::Kind::regex);
    CHECK(named.names[2].text == "^(?P<sub>.+)\\.ex\\.test$");
    REQUIRE(named.listen.size() == 1);
    CHECK(named.listen[0].text == "127.0.0.1:8081");
    CHECK(named.locations == std::vector<size_t>{1, 2});
    CHECK(config.sites[2].locations == std::vector<size_t>{3});
    // The same "/" in three sites is no duplicate; labels keep them apart.
    CHECK(config.locations[0].name == "/");
    CHECK(config.locations[1].name == "Example.COM./");
    CHECK(config.locations[2].name == "Example.COM. ~\\.php$");
    CHECK(config.locations[3].name == "other");
    CHECK(config.locations[1].site == 1);
    CHECK(config.locations[3].site == 2);
}

TEST_CASE("a config of [[site]]s only has no unnamed site", "[config][sites]") {
    Config config = load(SERVER "[[site]]\nnames = [\"a.test\"]\n[[site]]\nnames = [\"b.test\"]\n");
    REQUIRE(config.sites.size() == 2);
    CHECK(config.sites[0].names[0].text == "a.test");
    CHECK_FALSE(config.sites[0].is_default);
    CHECK(load(SERVER).sites.size() == 1);  // no [[site]]: the unnamed one, even without locations
}

TEST_CASE("site names match exact, then the longest wildcard, then regexes in file order",
          "[sites]") {
    Config config = load(SERVER
                         "[[site]]\nnames = [\"~^www\\\\.\"]\n"
                         "[[site]]\nnames = [\"*.example.com\"]\n"
                         "[[site]]\nnames = [\"*.a.example.com\", \"exact.a.example.com\"]\n"
                         "[[site]]\nnames = [\"~example\", \"www.example.com\"]\n");
    SiteNames names;
    for (size_t i = 0; i < config.sites.size(); ++i)
        names.add(config.sites[i], static_cast<int>(i));
    CHECK(names.match("www.example.com") == 3);  // exact beats the regex of an earlier site
    CHECK(names.match("exact.a.example.com") == 2);
    CHECK(names.match("x.a.example.com") == 2);  // the longer wildcard
    CHECK(names.match("x.y.example.com") == 1);  // a wildcard covers several labels (nginx)
    CHECK(names.match("example.com") == 3);      // not the wildcard: the regex
    CHECK(names.match("www.other.test") == 0);   // regexes in file order
    CHECK(names.match("other.test") == -1);
}

TEST_CASE("each listener has its sites and its default", "[sites]") {
    Config config =
        load(SERVER
             "[[site]]\nnames = [\"a.test\"]\nlisten = [\"127.0.0.1:8081\"]\n"
             "[[site]]\nnames = [\"b.test\"]\n"
             "[[site]]\nnames = [\"c.test\"]\ndefault = true\nlisten = [\"127.0.0.1:8081\"]\n");
    portico::router::Sites sites(config);
    CHECK_FALSE(sites.single());
    CHECK(sites.select(0, "a.test") == 1);  // a.test does not answer on 8080
    CHECK(sites.select(0, "") == 1);        // the first that answers on 8080
    CHECK(sites.select(1, "a.test") == 0);
    CHECK(sites.select(1, "b.test") == 1);
    CHECK(sites.select(1, "unknown.test") == 2);  // the marked default
    CHECK(sites.server_name(0) == "a.test");
    CHECK(sites.router(1).match("/") == -1);
    CHECK(portico::router::Sites(load(SERVER)).single());
}

TEST_CASE("a regex name accepts both group spellings, as RE2 reads them", "[sites]") {
    ParsedSiteName pcre = parse_site_name("~^(?<sub>[a-z]+)\\.(?P<zone>test)$");
    CHECK(pcre.error.empty());
    CHECK(pcre.name.text == "^(?P<sub>[a-z]+)\\.(?P<zone>test)$");
    CHECK(parse_site_name("~a\\(?<b>c)").name.text == "a\\(?<b>c)");  // an escaped paren
    CHECK(parse_site_name("[::1]").error.empty());
}

}  // namespace config_sites_test
