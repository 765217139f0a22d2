// http::is_valid_host: what a Host (or :authority) may hold, RFC 3986 3.2.2
// and nginx's refusal of "..". The codecs answer 400 for the rest
// (tests/integration/bad_input_test.cpp).
#include <catch2/catch.hpp>

#include <string>

#include "http/request.hpp"

using portico::http::is_valid_host;

TEST_CASE("host: names, IPv4, bracketed IPv6, ports and percent-encoding are valid", "[http]") {
    for (const char* host : {"", "t", "a.test", "a.test:8080", "127.0.0.1", "127.0.0.1:80", "[::1]", "[::1]:8080",
                             "[2001:db8::7]:443", "xn--bcher-kva.test", "a%41.test", "under_score.test",
                             "a-b~c!d$e&f'g(h)i*j+k,l;m=n", "trailing.dot.", "a.test:", "a.test:65535"}) {
        INFO(host);
        CHECK(is_valid_host(host));
    }
}

TEST_CASE("host: what is not a host is refused", "[http]") {
    for (const char* host :
         {"a b", "evil.test/x?y", "../../etc", "a..b", "..", "a.test:80x", "a.test:123456", ":80", "a@b",
          "a\"b", "a\\b", "a#b", "[::1", "[]", "[::g]", "[::1]x", "a%4", "a%zz.test", "a\tb", "a.test::80"}) {
        INFO(host);
        CHECK_FALSE(is_valid_host(host));
    }
    CHECK_FALSE(is_valid_host(std::string("a\0b", 3)));
    CHECK_FALSE(is_valid_host("a\x80.test"));
}
