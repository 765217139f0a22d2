// [limit.NAME], limit = [...] and max_concurrent: each broken value is a
// `portico -t` error at its line and column, and a good config loads.
#include <catch2/catch.hpp>

#include "broken_configs.hpp"
#include "config/config.hpp"

using portico::config::parse_config;
using portico::test::BrokenConfig;

namespace config_limits_test {

namespace {

constexpr const char* fake_path = "/nonexistent-portico-conf/portico.toml";

// Line 1-2 [server], line 4 [limit.per_ip], its keys from line 5.
#define LIMIT(keys, location)                                       \
    "[server]\nlisten = [\"127.0.0.1:0\"]\n\n[limit.per_ip]\n" keys \
    "\n[[location]]\nprefix = \"/\"\nroot = \"/\"\n" location

const BrokenConfig broken_limits[] = {
    {"a rate of 0", LIMIT("key = \"$remote_addr\"\nrate = \"0r/s\"\n", "limit = [\"per_ip\"]\n"),
     "6:8", "limit.per_ip.rate: expected requests per second or minute above 0"},
    {"a rate per hour", LIMIT("key = \"$remote_addr\"\nrate = \"10r/h\"\n", ""), "6:8",
     "limit.per_ip.rate: expected requests per second or minute"},
    {"a rate below one a minute's resolution",
     LIMIT("key = \"$remote_addr\"\nrate = \"0r/m\"\n", ""), "6:8", "limit.per_ip.rate"},
    {"no rate", LIMIT("key = \"$remote_addr\"\n", ""), "4:1", "limit.per_ip.rate: missing"},
    {"a burst below 0", LIMIT("key = \"$remote_addr\"\nrate = \"1r/s\"\nburst = -1\n", ""), "7:9",
     "limit.per_ip.burst: expected a count of requests from 0 to 1000000"},
    {"a delay beyond the burst",
     LIMIT("key = \"$remote_addr\"\nrate = \"1r/s\"\nburst = 2\ndelay = 3\n", ""), "8:9",
     "limit.per_ip.delay: is more than burst"},
    {"a key that is not a template", LIMIT("key = 5\nrate = \"1r/s\"\n", ""), "5:7",
     "limit.per_ip.key"},
    {"a key with an unknown variable", LIMIT("key = \"$remote_address\"\nrate = \"1r/s\"\n", ""),
     "5:8", "unknown variable '$remote_address'"},
    {"an empty key", LIMIT("key = \"\"\nrate = \"1r/s\"\n", ""), "5:7", "limit.per_ip.key"},
    {"no key", LIMIT("rate = \"1r/s\"\n", ""), "4:1", "limit.per_ip.key: missing"},
    {"a status that is not an error",
     LIMIT("key = \"$remote_addr\"\nrate = \"1r/s\"\nstatus = 200\n", ""), "7:10",
     "limit.per_ip.status: expected a status from 400 to 599"},
    {"a zone too small",
     LIMIT("key = \"$remote_addr\"\nrate = \"1r/s\"\nzone_size = \"1KiB\"\n", ""), "7:13",
     "limit.per_ip.zone_size"},
    {"an unknown key", LIMIT("key = \"$remote_addr\"\nrate = \"1r/s\"\nnodelay = true\n", ""),
     "7:1", "unknown key 'nodelay'"},
    {"a location naming no limit of the file",
     LIMIT("key = \"$remote_addr\"\nrate = \"1r/s\"\n", "limit = [\"per_host\"]\n"), "11:10",
     "limit: \"per_host\" is not a [limit.NAME] table of this file"},
    {"a limit listed twice",
     LIMIT("key = \"$remote_addr\"\nrate = \"1r/s\"\n", "limit = [\"per_ip\", \"per_ip\"]\n"),
     "11:20", "limit: \"per_ip\" is listed twice"},
    {"limit not a list", LIMIT("key = \"$remote_addr\"\nrate = \"1r/s\"\n", "limit = \"per_ip\"\n"),
     "11:9", "limit: expected a list of [limit.NAME] names"},
    {"max_concurrent of 0",
     LIMIT("key = \"$remote_addr\"\nrate = \"1r/s\"\n",
           "max_concurrent = { key = \"$remote_addr\", count = 0 }\n"),
     "11:50", "max_concurrent.count: expected a count of requests from 1 to 1000000"},
    {"max_concurrent without count",
     LIMIT("key = \"$remote_addr\"\nrate = \"1r/s\"\n",
           "max_concurrent = { key = \"$remote_addr\" }\n"),
     "11:18", "max_concurrent.count: missing"},
    {"max_concurrent with an unknown variable",
     LIMIT("key = \"$remote_addr\"\nrate = \"1r/s\"\n",
           "max_concurrent = { key = \"$nope\", count = 2 }\n"),
     "11:27", "unknown variable '$nope'"},
    {"a limit name with a space",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n\n[limit.\"per ip\"]\nkey = \"$remote_addr\"\n"
     "rate = \"1r/s\"\n",
     "4:8", "limit: \"per ip\" is not a limit's name: letters, digits, '_' and '-' only"},
    {"a limit name with a quote",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n\n[limit.'per\"ip']\nkey = \"$remote_addr\"\n"
     "rate = \"1r/s\"\n",
     "4:8", "limit: \"per\"ip\" is not a limit's name"},
    {"an empty limit name",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n\n[limit.\"\"]\nkey = \"$remote_addr\"\n"
     "rate = \"1r/s\"\n",
     "4:8", "limit: \"\" is not a limit's name"},
};

}  // namespace

TEST_CASE("limits: each broken limit or max_concurrent is reported at its place",
          "[config][limits]") {
    portico::test::check_broken_configs(broken_limits, fake_path);
}

TEST_CASE("limits: a good config loads with nginx's units", "[config][limits]") {
    auto result =
        parse_config(LIMIT("key = \"$http_x_user\"\nrate = \"30r/m\"\nburst = 4\ndelay = 2\n"
                           "status = 503\nzone_size = \"1MiB\"\n",
                           "limit = [\"per_ip\"]\nmax_concurrent = { key = "
                           "\"$remote_addr\", count = 3, status = 503 }\n"),
                     fake_path);
    INFO(portico::test::all_messages(result));
    REQUIRE(result.config);
    const auto& limit = result.config->limits.at(0);
    CHECK(limit.name == "per_ip");
    CHECK(limit.rate_milli == 500);  // nginx: 30r/m is 500 thousandths a second
    CHECK(limit.burst == 4);
    CHECK(limit.delay == 2);
    CHECK(limit.status == 503);
    CHECK(limit.zone_bytes == 1u << 20);
    const auto& location = result.config->locations.at(0);
    CHECK(location.limits == std::vector<size_t>{0});
    REQUIRE(location.max_concurrent);
    CHECK(location.max_concurrent->count == 3);
    CHECK(location.max_concurrent->status == 503);
}

TEST_CASE("limits: a name of letters, digits, '_' and '-' loads, quoted or not",
          "[config][limits]") {
    auto result = parse_config(
        "[server]\nlisten = [\"127.0.0.1:0\"]\n[limit.Per-IP_2]\nkey = \"$remote_addr\"\n"
        "rate = \"1r/s\"\n[limit.\"per-host\"]\nkey = \"$host\"\nrate = \"1r/s\"\n"
        "[[location]]\nprefix = \"/\"\nroot = \"/\"\nlimit = [\"Per-IP_2\", \"per-host\"]\n",
        fake_path);
    INFO(portico::test::all_messages(result));
    REQUIRE(result.config);
    CHECK(result.config->limits.at(0).name == "Per-IP_2");
    CHECK(result.config->limits.at(1).name == "per-host");
}

#undef LIMIT

}  // namespace config_limits_test
