// [server] trusted_proxies and listen tables with proxy_protocol: what they
// read into, and each mistake at its line and column (`portico -t`).
#include <arpa/inet.h>
#include <netinet/in.h>

#include <string>

#include <catch2/catch.hpp>

#include "config/address_range.hpp"
#include "config/config.hpp"

using namespace portico::config;

// Its own namespace: in a unity build the test files share one translation
// unit, and their helpers (Answer, fake_path...) must not meet.
namespace config_client_address_test {

namespace {

constexpr const char* fake_path = "/nonexistent-portico-conf/portico.toml";

std::string messages(const LoadResult& result) {
    std::string all;
    for (const ConfigError& error : result.errors) all += "\n" + error.to_string();
    return all;
}

// An error of `toml` starts with FILE:`at`: and holds `message`.
void check_error(const char* toml, const char* at, const char* message) {
    LoadResult result = parse_config(toml, fake_path);
    INFO("expected at " << at << ": " << message << "\nerrors:" << messages(result));
    CHECK_FALSE(result.config);
    bool found = false;
    for (const ConfigError& error : result.errors) {
        std::string text = error.to_string();
        found = found || (text.starts_with(std::string(fake_path) + ":" + at + ": ") &&
                          text.find(message) != std::string::npos);
    }
    CHECK(found);
}

sockaddr_in v4(const char* ip) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    inet_pton(AF_INET, ip, &address.sin_addr);
    return address;
}

sockaddr_in6 v6(const char* ip) {
    sockaddr_in6 address{};
    address.sin6_family = AF_INET6;
    inet_pton(AF_INET6, ip, &address.sin6_addr);
    return address;
}

AddressRange range(const char* text) {
    std::string why;
    auto parsed = parse_address_range(text, why);
    INFO(text << ": " << why);
    REQUIRE(parsed);
    return *parsed;
}

template <typename Address>
bool contains(const char* range_text, const Address& address) {
    return range_contains(range(range_text), reinterpret_cast<const sockaddr&>(address));
}

}  // namespace

TEST_CASE("trusted_proxies and listen tables read into the config", "[config][client-address]") {
    LoadResult result = parse_config(R"(
[server]
listen = ["127.0.0.1:0", { address = "127.0.0.1:8081", proxy_protocol = true },
          { address = "[::1]:8082" }]
trusted_proxies = ["10.0.0.0/8", "::1", "127.0.0.1", "fd00::/8"]
)",
                                     fake_path);
    INFO(messages(result));
    REQUIRE(result.config);
    const ServerConfig& server = result.config->server;
    REQUIRE(server.listen.size() == 3);
    CHECK(server.listen[0].text == "127.0.0.1:0");
    CHECK_FALSE(server.listen[0].proxy_protocol);
    // The plain "ip:port", as sites compare their listen entries with it.
    CHECK(server.listen[1].text == "127.0.0.1:8081");
    CHECK(server.listen[1].proxy_protocol);
    CHECK(server.listen[2].text == "[::1]:8082");
    CHECK_FALSE(server.listen[2].proxy_protocol);
    REQUIRE(server.trusted_proxies.size() == 4);
    CHECK(server.trusted_proxies[0].family == AF_INET);
    CHECK(server.trusted_proxies[0].prefix_length == 8);
    CHECK(server.trusted_proxies[1].family == AF_INET6);
    CHECK(server.trusted_proxies[1].prefix_length == 128);
    CHECK(server.trusted_proxies[2].prefix_length == 32);
    CHECK(server.trusted_proxies[3].text == "fd00::/8");
}

TEST_CASE("a [tls] listen entry may be a PROXY protocol table too", "[config][client-address]") {
    LoadResult result = parse_config(R"(
[server]
listen = ["127.0.0.1:0"]
[tls]
listen = [{ address = "127.0.0.1:8443", proxy_protocol = true }]
certificates = [{ cert = "/nonexistent/cert.pem", key = "/nonexistent/key.pem" }]
)",
                                     fake_path);
    // The certificate files do not exist; the listen entry itself is fine.
    for (const ConfigError& error : result.errors)
        CHECK(error.message.find("listen") == std::string::npos);
}

TEST_CASE("bad trusted_proxies and listen entries are reported at their line and column",
          "[config][client-address]") {
    check_error("[server]\nlisten = [\"127.0.0.1:0\"]\ntrusted_proxies = [\"10.0.0.0/33\"]\n",
                "3:20", "server.trusted_proxies: \"10.0.0.0/33\": prefix length '33'");
    check_error(
        "[server]\nlisten = [\"127.0.0.1:0\"]\ntrusted_proxies = [\"::1\", \"lb.internal\"]\n",
        "3:27", "'lb.internal' is not an IP address");
    check_error("[server]\nlisten = [\"127.0.0.1:0\"]\ntrusted_proxies = [\"10.0.0.1/8\"]\n",
                "3:20", "bits are set past the /8 prefix");
    check_error("[server]\nlisten = [\"127.0.0.1:0\"]\ntrusted_proxies = [\"10.0.0.0/\"]\n", "3:20",
                "prefix length ''");
    check_error("[server]\nlisten = [\"127.0.0.1:0\"]\ntrusted_proxies = [\"fd00::/129\"]\n",
                "3:20", "not a number 0..128");
    check_error("[server]\nlisten = [\"127.0.0.1:0\"]\ntrusted_proxies = \"10.0.0.0/8\"\n", "3:19",
                "server.trusted_proxies: expected an array");
    check_error("[server]\nlisten = [\"127.0.0.1:0\"]\ntrusted_proxies = [8]\n", "3:20",
                "expected \"IP/BITS\" or \"IP\"");
    check_error(
        "[server]\nlisten = [\"127.0.0.1:0\", { address = \"127.0.0.1:8081\", proxy_protokol = "
        "true }]\n",
        "2:56", "unknown key 'proxy_protokol'");
    check_error("[server]\nlisten = [{ proxy_protocol = true }]\n", "2:11",
                "server.listen.address is required");
    check_error("[server]\nlisten = [{ address = \"localhost:80\", proxy_protocol = true }]\n",
                "2:23", "server.listen.address: \"localhost:80\": 'localhost' is not an IP");
    check_error("[server]\nlisten = [{ address = \"127.0.0.1:80\", proxy_protocol = \"yes\" }]\n",
                "2:56", "server.listen.proxy_protocol: expected");
    check_error("[server]\nlisten = [\"127.0.0.1:0\", 8081]\n", "2:26",
                "expected \"IP:port\" or { address = \"IP:port\", proxy_protocol = true }");
    check_error(
        "[server]\nlisten = [\"127.0.0.1:0\"]\n[tls]\nlisten = [{ address = \"127.0.0.1:x\", "
        "proxy_protocol = true }]\ncertificates = []\n",
        "4:23", "tls.listen.address: \"127.0.0.1:x\": port 'x'");
}

TEST_CASE("address ranges match IPv4, IPv6 and IPv4-mapped peers", "[config][client-address]") {
    CHECK(contains("10.0.0.0/8", v4("10.1.2.3")));
    CHECK_FALSE(contains("10.0.0.0/8", v4("11.0.0.1")));
    CHECK(contains("127.0.0.1", v4("127.0.0.1")));
    CHECK_FALSE(contains("127.0.0.1", v4("127.0.0.2")));
    CHECK(contains("192.168.4.0/22", v4("192.168.7.255")));
    CHECK_FALSE(contains("192.168.4.0/22", v4("192.168.8.0")));
    CHECK(contains("0.0.0.0/0", v4("203.0.113.7")));
    CHECK(contains("::1", v6("::1")));
    CHECK_FALSE(contains("::1", v6("::2")));
    CHECK(contains("fd00::/8", v6("fd12:3456::1")));
    CHECK_FALSE(contains("fd00::/8", v6("fe80::1")));
    CHECK(contains("2001:db8::/33", v6("2001:db8:7fff::1")));
    CHECK_FALSE(contains("2001:db8::/33", v6("2001:db8:8000::1")));
    // A dual-stack listener's IPv4 client is ::ffff:a.b.c.d.
    CHECK(contains("10.0.0.0/8", v6("::ffff:10.9.8.7")));
    CHECK_FALSE(contains("10.0.0.0/8", v6("::ffff:11.9.8.7")));
    // The families do not otherwise mix.
    CHECK_FALSE(contains("::1", v4("127.0.0.1")));
    CHECK_FALSE(contains("0.0.0.0/0", v6("2001:db8::1")));
}

}  // namespace config_client_address_test
