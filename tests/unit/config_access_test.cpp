// allow and deny of a location: what they read into, each mistake at its
// line and column (`portico -t`), and the verdict of the most specific entry
// (access/address_rules.hpp).
#include <arpa/inet.h>
#include <netinet/in.h>

#include <catch2/catch.hpp>
#include <string>

#include "access/address_rules.hpp"
#include "broken_configs.hpp"
#include "config/config.hpp"

using namespace portico::config;
using portico::access::AddressRules;
using portico::test::BrokenConfig;

// Its own namespace: in a unity build the test files share one translation
// unit, and their helpers must not meet.
namespace config_access_test {

namespace {

constexpr const char* fake_path = "/nonexistent-portico-conf/portico.toml";

// A location "/" answering 200, with `keys` added.
std::string config_with(const std::string& keys) {
    return "[server]\nlisten = [\"127.0.0.1:0\"]\n[[location]]\nprefix = \"/\"\n"
           "respond = { status = 200, body = \"ok\" }\n" +
           keys;
}

LocationConfig location_with(const std::string& keys) {
    LoadResult result = parse_config(config_with(keys), fake_path);
    INFO("errors:" << portico::test::all_messages(result));
    REQUIRE(result.config);
    return result.config->locations.at(0);
}

sockaddr_storage address(const char* ip) {
    sockaddr_storage storage{};
    if (inet_pton(AF_INET, ip, &reinterpret_cast<sockaddr_in&>(storage).sin_addr) == 1) {
        storage.ss_family = AF_INET;
    } else {
        REQUIRE(inet_pton(AF_INET6, ip, &reinterpret_cast<sockaddr_in6&>(storage).sin6_addr) == 1);
        storage.ss_family = AF_INET6;
    }
    return storage;
}

// "allow", "deny" or "none" for `ip` under `keys`.
std::string verdict(const std::string& keys, const char* ip) {
    LocationConfig location = location_with(keys);
    AddressRules rules(location.access);
    sockaddr_storage client = address(ip);
    const AccessRule* rule = rules.judge(reinterpret_cast<const sockaddr&>(client));
    if (rule == nullptr) return "none";
    return rule->allow ? "allow" : "deny";
}

// Lines 1-5 are config_with's.
const BrokenConfig broken_configs[] = {
    {"a CIDR that does not parse",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n[[location]]\n"
     "prefix = \"/\"\nrespond = { status = 200 }\n"
     "allow = [\"10.0.0.0/8\", \"10.0.0.0/33\"]\n",
     "6:24", "location '/': allow: \"10.0.0.0/33\": prefix length '33' is not a number 0..32"},
    {"a host name",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n[[location]]\n"
     "prefix = \"/\"\nrespond = { status = 200 }\n"
     "deny = [\"lb.internal\"]\n",
     "6:9", "'lb.internal' is not an IP address"},
    {"bits past the prefix",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n[[location]]\n"
     "prefix = \"/\"\nrespond = { status = 200 }\n"
     "deny = [\"192.168.1.1/24\"]\n",
     "6:9", "bits are set past the /24 prefix"},
    {"an IPv6 prefix too long",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n[[location]]\n"
     "prefix = \"/\"\nrespond = { status = 200 }\n"
     "allow = [\"fd00::/129\"]\n",
     "6:10", "not a number 0..128"},
    {"not a list",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n[[location]]\n"
     "prefix = \"/\"\nrespond = { status = 200 }\n"
     "allow = \"10.0.0.0/8\"\n",
     "6:9", "allow: expected an array"},
    {"not a string",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n[[location]]\n"
     "prefix = \"/\"\nrespond = { status = 200 }\n"
     "deny = [\"all\", 10]\n",
     "6:16", "expected \"IP/BITS\", \"IP\" or \"all\""},
    {"the same prefix in both lists",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n[[location]]\n"
     "prefix = \"/\"\nrespond = { status = 200 }\n"
     "allow = [\"10.0.0.0/8\"]\n"
     "deny = [\"::1\", \"10.0.0.0/8\"]\n",
     "7:16", "deny: \"10.0.0.0/8\" has the same prefix as \"10.0.0.0/8\" in allow (line 6)"},
    {"all in both lists",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n[[location]]\n"
     "prefix = \"/\"\nrespond = { status = 200 }\n"
     "allow = [\"all\"]\n"
     "deny = [\"all\"]\n",
     "7:9", "equally specific"},
    {"all and a /0 of one family",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n[[location]]\n"
     "prefix = \"/\"\nrespond = { status = 200 }\n"
     "allow = [\"::/0\"]\n"
     "deny = [\"all\"]\n",
     "7:9", "has the same prefix as \"::/0\""},
    {"one entry twice",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n[[location]]\n"
     "prefix = \"/\"\nrespond = { status = 200 }\n"
     "deny = [\"::1\", \"::1/128\"]\n",
     "6:16", "list it once"},
};

}  // namespace

TEST_CASE("allow and deny read into the location, in the order written", "[config][access]") {
    LocationConfig location =
        location_with("allow = [\"10.0.0.0/8\", \"::1\"]\ndeny = [\"all\", \"10.1.0.0/16\"]\n");
    REQUIRE(location.access.size() == 4);
    CHECK(location.access[0].allow);
    CHECK(location.access[0].range.family == AF_INET);
    CHECK(location.access[0].range.prefix_length == 8);
    CHECK(location.access[1].range.family == AF_INET6);
    CHECK(location.access[1].range.prefix_length == 128);
    CHECK_FALSE(location.access[2].allow);
    CHECK(location.access[2].all);
    CHECK(location.access[3].range.text == "10.1.0.0/16");
    CHECK(location_with("").access.empty());
}

TEST_CASE("bad allow and deny entries are reported at their line and column", "[config][access]") {
    portico::test::check_broken_configs(broken_configs, fake_path);
}

TEST_CASE("nginx's usual lists give nginx's first-match verdict", "[config][access]") {
    // allow A; allow B; deny all;
    const std::string allow_two = "allow = [\"10.1.2.3\", \"192.168.0.0/16\"]\ndeny = [\"all\"]\n";
    CHECK(verdict(allow_two, "10.1.2.3") == "allow");
    CHECK(verdict(allow_two, "192.168.44.1") == "allow");
    CHECK(verdict(allow_two, "10.1.2.4") == "deny");
    CHECK(verdict(allow_two, "::1") == "deny");
    // deny A; allow B/8; deny all;
    const std::string deny_one = "deny = [\"10.0.0.1\", \"all\"]\nallow = [\"10.0.0.0/8\"]\n";
    CHECK(verdict(deny_one, "10.0.0.1") == "deny");
    CHECK(verdict(deny_one, "10.0.0.2") == "allow");
    CHECK(verdict(deny_one, "11.0.0.1") == "deny");
}

TEST_CASE("the most specific entry wins, whichever list it is in", "[config][access]") {
    const std::string nested =
        "allow = [\"10.0.0.0/8\", \"10.1.1.0/24\"]\ndeny = [\"10.1.0.0/16\", \"10.1.1.7\"]\n";
    CHECK(verdict(nested, "10.2.0.1") == "allow");    // /8
    CHECK(verdict(nested, "10.1.2.1") == "deny");     // /16
    CHECK(verdict(nested, "10.1.1.6") == "allow");    // /24
    CHECK(verdict(nested, "10.1.1.7") == "deny");     // /32
    CHECK(verdict(nested, "11.0.0.1") == "none");     // no entry: passes
    CHECK(verdict(nested, "2001:db8::1") == "none");  // no IPv6 entry
    // Odd prefix lengths, masks across a byte.
    CHECK(verdict("deny = [\"172.16.0.0/12\"]\n", "172.31.255.255") == "deny");
    CHECK(verdict("deny = [\"172.16.0.0/12\"]\n", "172.32.0.0") == "none");
}

TEST_CASE("IPv6 ranges, and IPv4-mapped clients judged by the IPv4 entries", "[config][access]") {
    const std::string six =
        "allow = [\"2001:db8::/32\", \"2001:db8:0:1::/64\"]\ndeny = [\"2001:db8::/48\", \"all\"]\n";
    CHECK(verdict(six, "2001:db8:1::1") == "allow");        // /32
    CHECK(verdict(six, "2001:db8:0:2::1") == "deny");       // /48
    CHECK(verdict(six, "2001:db8:0:1::ff") == "allow");     // /64
    CHECK(verdict(six, "2001:db9::1") == "deny");           // all
    CHECK(verdict("deny = [\"::1\"]\n", "::1") == "deny");  // /128: the low half's last bit
    CHECK(verdict("deny = [\"::1\"]\n", "::2") == "none");
    CHECK(verdict("deny = [\"fc00::/7\"]\n", "fdff::1") == "deny");
    CHECK(verdict("deny = [\"fc00::/7\"]\n", "fe00::1") == "none");
    CHECK(verdict("deny = [\"2001:db8::/100\"]\n", "2001:db8::fff:ffff") == "deny");
    CHECK(verdict("deny = [\"2001:db8::/100\"]\n", "2001:db8::1000:0") == "none");

    const std::string four = "allow = [\"127.0.0.1\"]\ndeny = [\"all\"]\n";
    CHECK(verdict(four, "::ffff:127.0.0.1") == "allow");
    CHECK(verdict(four, "::ffff:127.0.0.2") == "deny");
    CHECK(verdict("deny = [\"10.0.0.0/8\"]\n", "::ffff:10.9.9.9") == "deny");
    CHECK(verdict("deny = [\"::/0\"]\n", "::ffff:10.9.9.9") == "none");  // not an IPv6 client
}

}  // namespace config_access_test
