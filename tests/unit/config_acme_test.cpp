// [acme] and a site's `acme = true`: each broken value is a `portico -t`
// error at its line and column, and a good config loads as written.
#include <catch2/catch.hpp>

#include "broken_configs.hpp"
#include "config/config.hpp"

namespace config_acme_test {

namespace {

constexpr const char* fake_path = "/nonexistent-portico-conf/portico.toml";

// Lines 1-5: [server] and [tls]; what follows starts on line 6.
std::string with_tls(const std::string& rest) {
    return "[server]\nlisten = [\"127.0.0.1:0\"]\n[tls]\nlisten = [\"127.0.0.1:0\"]\n"
           "certificates = [{ cert = \"a.pem\", key = \"a.key\" }]\n" +
           rest;
}

const std::string good_acme =
    "[acme]\nemail = \"ops@example.com\"\ndirectory = \"https://ca.test/dir\"\nstorage = "
    "\"/tmp\"\n";

using portico::test::BrokenConfig;

const std::string cases[][3] = {
    // {toml, at, message}
    {with_tls(
         "[acme]\ndirectory = \"https://ca.test/dir\"\nstorage = \"/nonexistent-acme-store\"\n"),
     "8:11", "acme.storage: '/nonexistent-acme-store' is not a writable folder: No such file"},
    {with_tls("[acme]\ndirectory = \"https://ca.test/dir\"\nstorage = \"/etc/hostname\"\n"), "8:11",
     "acme.storage: '/etc/hostname' is not a writable folder"},
    {with_tls("[acme]\ndirectory = \"http://ca.test/dir\"\nstorage = \"/tmp\"\n"), "7:13",
     "acme.directory: expected the CA's directory as an https:// URL"},
    {with_tls("[acme]\nstorage = \"/tmp\"\n"), "6:1", "acme.directory is required"},
    {with_tls("[acme]\ndirectory = \"https://ca.test/dir\"\n"), "6:1", "acme.storage is required"},
    {with_tls(
         "[acme]\nemail = \"nobody\"\ndirectory = \"https://ca.test/dir\"\nstorage = \"/tmp\"\n"),
     "7:9", "acme.email: expected an address like \"ops@example.com\""},
    {with_tls("[acme]\ndirectory = \"https://ca.test/dir\"\nstorage = \"/tmp\"\n"
              "ca_root = \"/nonexistent-root.pem\"\n"),
     "9:11", "acme.ca_root: cannot read '/nonexistent-root.pem'"},
    {with_tls("[acme]\ndirectory = \"https://ca.test/dir\"\nstorage = \"/tmp\"\ncolour = 1\n"),
     "9:1", "unknown key 'colour' in [acme]"},
    {with_tls(good_acme + "[[site]]\nnames = [\"a.test\", \"*.b.test\"]\nacme = true\n"), "11:20",
     "site.names: \"*.b.test\" is a wildcard: ACME issues one only with DNS-01"},
    {with_tls(good_acme + "[[site]]\nnames = ['~^x\\.test$']\nacme = true\n"), "11:10",
     "is a regex: ACME needs each name spelled out"},
    {with_tls("[[site]]\nnames = [\"a.test\"]\nacme = true\n"), "8:8",
     "site.acme: needs an [acme] section"},
    {"[server]\nlisten = [\"127.0.0.1:0\"]\n" + good_acme +
         "[[site]]\nnames = [\"a.test\"]\nacme = true\n",
     "9:8", "site.acme: needs a [tls] section"},
    {with_tls(
         good_acme +
         "[[site]]\nnames = [\"a.test\"]\ncertificate = { cert = \"a.pem\", key = \"a.key\" }\n"
         "acme = true\n"),
     "13:8", "site.acme: cannot be combined with certificate"},
    {with_tls(good_acme + "[[site]]\nacme = true\n"), "11:8", "site.acme: needs names"},
    {with_tls(good_acme + "[[site]]\nnames = [\"a.test\"]\nacme = \"yes\"\n"), "12:8",
     "site.acme: expected true or false"},
};

}  // namespace

TEST_CASE("acme: each broken [acme] or site acme is reported at its line and column",
          "[config][acme]") {
    std::vector<BrokenConfig> broken;
    for (const auto& c : cases)
        broken.push_back({c[2].c_str(), c[0].c_str(), c[1].c_str(), c[2].c_str()});
    portico::test::check_broken_configs(broken, fake_path);
}

TEST_CASE("acme: [acme] and acme = true load as written", "[config][acme]") {
    portico::config::LoadResult result = portico::config::parse_config(
        with_tls(good_acme + "ca_root = \"/etc/hostname\"\n[[site]]\nnames = [\"a.test\", "
                             "\"www.a.test\"]\nacme = true\n[[site]]\nnames = [\"b.test\"]\n"),
        fake_path);
    INFO(portico::test::all_messages(result));
    REQUIRE(result.config);
    REQUIRE(result.config->acme);
    CHECK(result.config->acme->email == "ops@example.com");
    CHECK(result.config->acme->directory == "https://ca.test/dir");
    CHECK(result.config->acme->storage == "/tmp");
    CHECK(result.config->acme->ca_root == "/etc/hostname");
    REQUIRE(result.config->sites.size() == 2);
    CHECK(result.config->sites[0].acme);
    CHECK_FALSE(result.config->sites[1].acme);
}

}  // namespace config_acme_test
