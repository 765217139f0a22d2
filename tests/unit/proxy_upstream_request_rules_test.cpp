// The upstream request head a location's rules write: the target after a
// rewrite (Request::uri_changed), with and without proxy_path, and a
// trusted proxy's request id kept. The rest is driven end to end in
// tests/integration/proxy_rules_test.cpp.
#include <catch2/catch.hpp>

#include <arpa/inet.h>

#include <string>

#include "config/config.hpp"
#include "http/request.hpp"
#include "http/response_head.hpp"
#include "proxy/forwarded_head.hpp"
#include "proxy/upstream_request_rules.hpp"

using namespace portico;

// Its own namespace: in a unity build the test files share one translation
// unit, and their helpers (Answer, fake_path...) must not meet.
namespace proxy_upstream_request_rules_test {

namespace {

config::LocationConfig prefix_location(std::string prefix, std::string proxy_path) {
    config::LocationConfig location;
    location.match = config::MatchKind::prefix;
    location.pattern = std::move(prefix);
    location.proxy_path = std::move(proxy_path);
    return location;
}

// A GET of `target` as the codec leaves it (the views into `target`,
// normalized_path as routing sets it).
void receive(http::Request& request, std::string_view target, std::string normalized) {
    request.method_name = "GET";
    request.target = target;
    size_t question = target.find('?');
    request.path = target.substr(0, question);
    if (question != std::string_view::npos) request.query = target.substr(question + 1);
    request.normalized_path = std::move(normalized);
}

// What write_target puts on the request line.
std::string target_sent(const config::LocationConfig& location, const http::Request& request) {
    proxy::UpstreamRequestRules rules(location);
    char buffer[1024];
    http::ResponseHead head(buffer, sizeof buffer);
    rules.write_target(head, request);
    return std::string(head.bytes());
}

}  // namespace

TEST_CASE("upstream target: a rewritten URI is sent instead of the one received", "[proxy]") {
    http::Request request;
    receive(request, "/old/a%20b?x=1", "/old/a b");
    config::LocationConfig plain = prefix_location("/", "");
    CHECK(target_sent(plain, request) == "/old/a%20b?x=1");

    // rewrite '^/old/(.*)$' '/new/$1' break: the new path, encoded again,
    // with the query as the rewrite left it.
    request.uri_changed = true;
    request.normalized_path = "/new/a b\r\n";
    CHECK(target_sent(plain, request) == "/new/a%20b%0D%0A?x=1");
    request.rewritten_query = "page=2&x=1";
    request.query = request.rewritten_query;
    CHECK(target_sent(plain, request) == "/new/a%20b%0D%0A?page=2&x=1");
    request.query = {};
    CHECK(target_sent(plain, request) == "/new/a%20b%0D%0A");
}

TEST_CASE("upstream target: proxy_path replaces the prefix of a rewritten URI too", "[proxy]") {
    http::Request request;
    receive(request, "/api/old?q", "/api/old");
    request.uri_changed = true;
    request.normalized_path = "/api/new";
    config::LocationConfig api = prefix_location("/api/", "/v1/");
    CHECK(target_sent(api, request) == "/v1/new?q");
    // Moved out of the prefix (a `break` to another path): sent whole, as
    // nginx sends a URI changed in its location.
    request.normalized_path = "/elsewhere/x";
    CHECK(target_sent(api, request) == "/elsewhere/x?q");
}

TEST_CASE("upstream target: an absolute-form target goes in origin form", "[proxy]") {
    http::Request request;
    std::string_view target = "http://a.test/p?q";
    receive(request, target, "/p");
    request.path = target.substr(13, 2);
    request.query = target.substr(16);
    request.authority = target.substr(7, 6);
    CHECK(target_sent(prefix_location("/", ""), request) == "/p?q");
    CHECK(target_sent(prefix_location("/", "/app/"), request) == "/app/p?q");
}

TEST_CASE("upstream head: a request id set before (a trusted proxy's) is the one sent", "[proxy]") {
    http::Request request;
    receive(request, "/", "/");
    request.request_id = "0123456789abcdef0123456789abcdef";
    config::LocationConfig location = prefix_location("/", "");
    proxy::UpstreamRequestRules rules(location);
    http::PeerAddress client{};
    client.v4.sin_family = AF_INET;
    char buffer[1024];
    http::ResponseHead head(buffer, sizeof buffer);
    proxy::write_upstream_request_head(head, request, client, rules, "app:80", false, true);
    std::string text(head.bytes());
    INFO(text);
    CHECK(text.find("\r\nX-Request-ID: 0123456789abcdef0123456789abcdef\r\n") != std::string::npos);
}

TEST_CASE("upstream head: each kind of proxy_headers value, the port's line redone on a change",
          "[proxy]") {
    config::LocationConfig location = prefix_location("/", "");
    auto add = [&location](std::string name, std::string_view value) {
        config::HeaderRule rule;
        rule.name = std::move(name);
        config::TemplateError error;
        REQUIRE(config::compile_template(value, {}, rule.value, error));
        location.proxy_headers.push_back(std::move(rule));
    };
    add("X-Forwarded-Port", "$server_port");
    add("Accept-Encoding", "");
    add("X-Client", "$remote_addr");
    add("X-Static", "fixed");
    add("X-Where", "$scheme://$server_port$uri");
    add(std::string(70, 'L'), "long");

    proxy::UpstreamRequestRules rules(location);
    http::PeerAddress client{};
    client.v4.sin_family = AF_INET;
    client.v4.sin_addr.s_addr = htonl(0x7f000002);
    const std::string long_name(70, 'l');  // past the lengths' bitmask
    auto head_for = [&](uint16_t port) {
        http::Request request;
        receive(request, "/p", "/p");
        request.server_port = port;
        request.headers.push_back({"accept-encoding", "gzip"});
        request.headers.push_back({"x-client", "spoofed"});
        request.headers.push_back({"X-Kept", "yes"});
        request.headers.push_back({long_name, "client's"});
        char buffer[2048];
        http::ResponseHead head(buffer, sizeof buffer);
        proxy::write_upstream_request_head(head, request, client, rules, "app:80", false, true);
        return std::string(head.bytes());
    };
    for (uint16_t port : {8080, 8080, 443}) {
        std::string text = head_for(port);
        INFO(text);
        std::string digits = std::to_string(port);
        CHECK(text.find("\r\nX-Forwarded-Port: " + digits +
                        "\r\nX-Client: 127.0.0.2\r\n"
                        "X-Static: fixed\r\nX-Where: http://" +
                        digits + "/p\r\n" + std::string(70, 'L') + ": long\r\n") !=
              std::string::npos);
        CHECK(text.find("\r\nX-Kept: yes\r\n") != std::string::npos);
        CHECK(text.find("ccept-Encoding") == std::string::npos);
        CHECK(text.find("ccept-encoding") == std::string::npos);
        CHECK(text.find("spoofed") == std::string::npos);
        CHECK(text.find("client's") == std::string::npos);
    }
}

}  // namespace proxy_upstream_request_rules_test
