// The real client behind trusted proxies: X-Forwarded-For walked from the
// right (nginx's real_ip_recursive on), and the X-Request-ID kept from a
// trusted peer only.
#include <arpa/inet.h>

#include <deque>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "config/address_range.hpp"
#include "fake_exchange.hpp"
#include "http/forwarded_client.hpp"

using namespace portico;

// Its own namespace: in a unity build the test files share one translation
// unit, and their helpers (Answer, fake_path...) must not meet.
namespace http_forwarded_client_test {

namespace {

http::PeerAddress address(const char* ip) {
    http::PeerAddress parsed{};
    REQUIRE(http::parse_forwarded_address(ip, parsed));
    return parsed;
}

std::string text(const http::PeerAddress& address) {
    char buffer[INET6_ADDRSTRLEN];
    return std::string(http::format_ip(address, buffer, sizeof buffer));
}

std::vector<config::AddressRange> ranges(std::vector<const char*> texts) {
    std::vector<config::AddressRange> parsed;
    for (const char* range : texts) {
        std::string why;
        auto one = config::parse_address_range(range, why);
        REQUIRE(one);
        parsed.push_back(*one);
    }
    return parsed;
}

// The client `peer` stands for, given these X-Forwarded-For lines.
std::string client_of(const char* peer, std::vector<std::string> forwarded_for,
                      std::vector<const char*> trusted = {"10.0.0.0/8", "::1", "127.0.0.1"}) {
    http::Request request;
    for (const std::string& value : forwarded_for)
        request.headers.push_back({"X-Forwarded-For", value});
    request.headers.push_back({"Host", "example.test"});
    std::vector<config::AddressRange> trusted_ranges = ranges(trusted);
    return text(http::forwarded_client(request, trusted_ranges, address(peer)));
}

}  // namespace

TEST_CASE("X-Forwarded-For entries parse as addresses, with or without a port",
          "[client-address]") {
    http::PeerAddress parsed{};
    CHECK(http::parse_forwarded_address("203.0.113.7", parsed));
    CHECK(text(parsed) == "203.0.113.7");
    CHECK(http::parse_forwarded_address("  203.0.113.8:5173 ", parsed));
    CHECK(text(parsed) == "203.0.113.8");
    CHECK(http::parse_forwarded_address("2001:db8::1", parsed));
    CHECK(text(parsed) == "2001:db8::1");
    CHECK(http::parse_forwarded_address("[2001:db8::2]:443", parsed));
    CHECK(text(parsed) == "2001:db8::2");
    CHECK(http::parse_forwarded_address("[2001:db8::3]", parsed));
    CHECK(text(parsed) == "2001:db8::3");
    for (const char* bad :
         {"", "unknown", "example.com", "203.0.113", "203.0.113.7.1", "[2001:db8::1",
          "[2001:db8::1]x", "300.0.0.1", "_hidden", "203.0.113.7 203.0.113.8"}) {
        INFO(bad);
        CHECK_FALSE(http::parse_forwarded_address(bad, parsed));
    }
}

TEST_CASE("the client is the rightmost X-Forwarded-For entry that is not trusted",
          "[client-address]") {
    // A peer that is not trusted is the client, whatever it claims.
    CHECK(client_of("203.0.113.9", {"198.51.100.1"}) == "203.0.113.9");
    // A trusted peer without X-Forwarded-For stays the client.
    CHECK(client_of("10.0.0.1", {}) == "10.0.0.1");
    CHECK(client_of("10.0.0.1", {"198.51.100.1"}) == "198.51.100.1");
    // A spoofed leftmost entry is not taken: the rightmost untrusted one is.
    CHECK(client_of("10.0.0.1", {"1.1.1.1, 198.51.100.1, 10.0.0.2"}) == "198.51.100.1");
    // Several lines are one list, in order.
    CHECK(client_of("10.0.0.1", {"1.1.1.1, 198.51.100.1", "10.0.0.3,10.0.0.2"}) == "198.51.100.1");
    // All trusted: the leftmost.
    CHECK(client_of("127.0.0.1", {"10.0.0.5, 10.0.0.4"}) == "10.0.0.5");
    // An entry that is not an address stops the walk at the last trusted hop (nginx).
    CHECK(client_of("10.0.0.1", {"198.51.100.1, unknown"}) == "10.0.0.1");
    CHECK(client_of("10.0.0.1", {"198.51.100.1, garbage, 10.0.0.2"}) == "10.0.0.2");
    // Empty entries are skipped.
    CHECK(client_of("10.0.0.1", {"198.51.100.1, , "}) == "198.51.100.1");
    // IPv6, and ports some balancers add.
    CHECK(client_of("::1", {"[2001:db8::7]:5000"}) == "2001:db8::7");
    CHECK(client_of("::1", {"2001:db8::8, 198.51.100.2:443"}) == "198.51.100.2");
    // Only the listed ranges are trusted.
    CHECK(client_of("10.0.0.1", {"198.51.100.1, 172.16.0.1"}) == "172.16.0.1");
    CHECK(client_of("10.0.0.1", {"198.51.100.1, 172.16.0.1"}, {"10.0.0.0/8", "172.16.0.0/12"}) ==
          "198.51.100.1");
}

TEST_CASE("the step sets the client and keeps a trusted proxy's X-Request-ID", "[client-address]") {
    std::vector<config::AddressRange> trusted = ranges({"10.0.0.0/8"});
    http::ForwardedClient step(trusted);
    // The request views its header values (a kept X-Request-ID too): they
    // live as long as the test.
    std::deque<std::vector<std::pair<std::string, std::string>>> kept;
    auto run = [&](const char* peer, std::vector<std::pair<std::string, std::string>> given,
                   http::Request& request) {
        const auto& headers = kept.emplace_back(std::move(given));
        test::FakeExchange client("GET", "/", headers);
        client.peer = address(peer);
        for (const auto& [name, value] : headers) request.headers.push_back({name, value});
        CHECK(step.answer(request, client) == http::StepResult::next);
        return text(client.client_address());
    };
    {
        http::Request request;
        CHECK(run("10.1.1.1", {{"X-Forwarded-For", "198.51.100.1"}, {"X-Request-ID", "lb-42"}},
                  request) == "198.51.100.1");
        CHECK(http::request_id(request) == "lb-42");
    }
    {
        // From a peer that is not trusted: neither is taken.
        http::Request request;
        CHECK(run("203.0.113.1", {{"X-Forwarded-For", "198.51.100.1"}, {"X-Request-ID", "lb-42"}},
                  request) == "203.0.113.1");
        std::string_view id = http::request_id(request);
        CHECK(id.size() == 32);
        CHECK(id != "lb-42");
    }
    {
        // Not sane: made fresh.
        http::Request request;
        std::string long_id(129, 'a');
        CHECK(run("10.1.1.1", {{"X-Request-ID", long_id}}, request) == "10.1.1.1");
        CHECK(http::request_id(request).size() == 32);
    }
    CHECK(http::is_acceptable_request_id("0f8fad5b-d9cb-469f-a165-70867728950e"));
    CHECK(http::is_acceptable_request_id(std::string(128, 'x')));
    CHECK_FALSE(http::is_acceptable_request_id(""));
    CHECK_FALSE(http::is_acceptable_request_id(std::string(129, 'x')));
    CHECK_FALSE(http::is_acceptable_request_id("a b"));
    CHECK_FALSE(http::is_acceptable_request_id("a\x01"));
    CHECK_FALSE(http::is_acceptable_request_id("caf\xc3\xa9"));
}

}  // namespace http_forwarded_client_test
