#include "config/units.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <catch2/catch.hpp>

using portico::config::ConfigError;
using portico::config::Duration;
using portico::config::parse_duration;
using portico::config::parse_size;
using portico::config::HostNames;
using portico::config::parse_socket_address;
using portico::config::SocketAddress;

TEST_CASE("parse_duration reads integers with ms, s, m, h", "[config][units]") {
    CHECK(parse_duration("250ms") == Duration(250));
    CHECK(parse_duration("10s") == Duration(10'000));
    CHECK(parse_duration("5m") == Duration(300'000));
    CHECK(parse_duration("1h") == Duration(3'600'000));
    CHECK(parse_duration("0s") == Duration(0));
    CHECK(parse_duration("007ms") == Duration(7));
    CHECK(parse_duration("9223372036854775807ms") == Duration(INT64_MAX));
}

TEST_CASE("parse_duration refuses anything else", "[config][units]") {
    for (const char* text : {"", "s", "ms", "10", "10 s", " 10s", "10s ", "1.5s", "-1s", "+1s",
                             "10S", "10sec", "10d", "1h30m", "0x10s"}) {
        INFO("text: '" << text << "'");
        CHECK_FALSE(parse_duration(text));
    }
}

TEST_CASE("parse_duration refuses values that overflow milliseconds", "[config][units]") {
    CHECK_FALSE(parse_duration("9223372036854775808ms"));
    CHECK_FALSE(parse_duration("9223372036854775807s"));
    CHECK_FALSE(parse_duration("99999999999999999999ms"));
    CHECK(parse_duration("2562047788015h") == Duration(2562047788015LL * 3'600'000));
    CHECK_FALSE(parse_duration("2562047788016h"));
}

TEST_CASE("parse_size reads bytes and 1024-based units", "[config][units]") {
    CHECK(parse_size("0") == 0u);
    CHECK(parse_size("1024") == 1024u);
    CHECK(parse_size("5B") == 5u);
    CHECK(parse_size("16KiB") == 16u * 1024);
    CHECK(parse_size("16k") == 16u * 1024);
    CHECK(parse_size("16K") == 16u * 1024);
    CHECK(parse_size("16KB") == 16u * 1024);
    CHECK(parse_size("10MiB") == 10u * 1024 * 1024);
    CHECK(parse_size("2m") == 2u * 1024 * 1024);
    CHECK(parse_size("2MB") == 2u * 1024 * 1024);
    CHECK(parse_size("1GiB") == 1024u * 1024 * 1024);
    CHECK(parse_size("3G") == 3ull * 1024 * 1024 * 1024);
    CHECK(parse_size("18446744073709551615") == UINT64_MAX);
}

TEST_CASE("parse_size refuses anything else and overflow", "[config][units]") {
    for (const char* text :
         {"", "KiB", "16 KiB", "16kib", "16KIB", "1.5MiB", "-1", "+1", "16TiB", "16Kb",
          "18446744073709551616", "17179869184GiB", "17592186044416MiB"}) {
        INFO("text: '" << text << "'");
        CHECK_FALSE(parse_size(text));
    }
    CHECK(parse_size("17179869183GiB") == 17179869183ull << 30);
}

namespace {

uint16_t port_of(const SocketAddress& address) {
    const auto& sin = reinterpret_cast<const sockaddr_in&>(address.storage);
    return ntohs(sin.sin_port);
}

std::string ip_of(const SocketAddress& address) {
    char text[INET6_ADDRSTRLEN] = {};
    if (address.storage.ss_family == AF_INET) {
        inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(address.storage).sin_addr, text,
                  sizeof text);
    } else {
        inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(address.storage).sin6_addr, text,
                  sizeof text);
    }
    return text;
}

}  // namespace

TEST_CASE("parse_socket_address reads IPv4 and bracketed IPv6 literals", "[config][units]") {
    auto v4 = parse_socket_address("127.0.0.1:8080", HostNames::refused);
    REQUIRE(v4);
    CHECK(v4->storage.ss_family == AF_INET);
    CHECK(v4->length == sizeof(sockaddr_in));
    CHECK(ip_of(*v4) == "127.0.0.1");
    CHECK(port_of(*v4) == 8080);
    CHECK(v4->text == "127.0.0.1:8080");

    auto v6 = parse_socket_address("[::1]:443", HostNames::refused);
    REQUIRE(v6);
    CHECK(v6->storage.ss_family == AF_INET6);
    CHECK(v6->length == sizeof(sockaddr_in6));
    CHECK(ip_of(*v6) == "::1");
    CHECK(port_of(*v6) == 443);
    CHECK(v6->text == "[::1]:443");

    auto ephemeral = parse_socket_address("0.0.0.0:0", HostNames::refused);
    REQUIRE(ephemeral);
    CHECK(port_of(*ephemeral) == 0);
    auto highest = parse_socket_address("127.0.0.1:65535", HostNames::refused);
    REQUIRE(highest);
    CHECK(port_of(*highest) == 65535);
}

TEST_CASE("parse_socket_address refuses malformed addresses", "[config][units]") {
    for (const char* text :
         {"", "127.0.0.1", "127.0.0.1:", ":80", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:+80",
          "127.0.0.1:80x", "127.1:80", "256.0.0.1:80", "::1:80", "[::1]", "[::1]80",
          "[127.0.0.1]:80", "[nothost]:80", "localhost:80"}) {
        INFO("text: '" << text << "'");
        CHECK_FALSE(parse_socket_address(text, HostNames::refused));
    }
}

TEST_CASE("parse_socket_address says why it refused", "[config][units]") {
    std::string why;
    CHECK_FALSE(parse_socket_address("1.2.3.4:99999", HostNames::refused, why));
    CHECK(why == "port '99999' is not a number 0..65535");
    CHECK_FALSE(parse_socket_address("::1:80", HostNames::refused, why));
    CHECK_THAT(why, Catch::Contains("needs brackets"));
    CHECK_FALSE(parse_socket_address("localhost:80", HostNames::refused, why));
    CHECK_THAT(why, Catch::Contains("'localhost' is not an IP address"));
}

TEST_CASE("parse_socket_address resolves host names only when allowed", "[config][units]") {
    auto local = parse_socket_address("localhost:3000", HostNames::resolve_now);
    REQUIRE(local);
    CHECK((ip_of(*local) == "127.0.0.1" || ip_of(*local) == "::1"));
    CHECK(port_of(*local) == 3000);
    CHECK(local->text == "localhost:3000");

    std::string why;
    CHECK_FALSE(parse_socket_address("no-such-host.invalid:80", HostNames::resolve_now, why));
    CHECK_THAT(why, Catch::StartsWith("cannot resolve host 'no-such-host.invalid'"));
}

TEST_CASE("parse_socket_address leaves host names to the workers with resolve_later",
          "[config][units]") {
    // No lookup: the name need not resolve here (a Compose service, a
    // Kubernetes Service), only look like a name.
    auto app = parse_socket_address("no-such-host.invalid:3000", HostNames::resolve_later);
    REQUIRE(app);
    CHECK(app->length == 0);
    CHECK(app->resolved_by_workers());
    CHECK(app->host == "no-such-host.invalid");
    CHECK(app->port == 3000);
    CHECK(app->text == "no-such-host.invalid:3000");
    CHECK(parse_socket_address("my_app:3000", HostNames::resolve_later));

    // IP literals stay addresses.
    auto literal = parse_socket_address("127.0.0.1:3000", HostNames::resolve_later);
    REQUIRE(literal);
    CHECK_FALSE(literal->resolved_by_workers());
    CHECK(port_of(*literal) == 3000);

    std::string why;
    CHECK_FALSE(parse_socket_address("app server:3000", HostNames::resolve_later, why));
    CHECK_THAT(why, Catch::Contains("'app server' is not a host name"));
    CHECK_FALSE(parse_socket_address("-app:3000", HostNames::resolve_later, why));
}

TEST_CASE("ConfigError::to_string names file, line and column", "[config]") {
    ConfigError at_line{"/etc/portico.toml", {3, 7}, "bad value"};
    CHECK(at_line.to_string() == "/etc/portico.toml:3:7: bad value");
    ConfigError whole_file{"/etc/portico.toml", {}, "cannot read"};
    CHECK(whole_file.to_string() == "/etc/portico.toml: cannot read");
}
