// Templates: compiled once at load (config/template.hpp), expanded per
// request (http/template_expand.hpp).
#include <arpa/inet.h>

#include <catch2/catch.hpp>

#include "config/template.hpp"
#include "http/template_expand.hpp"

using namespace portico;

// Its own namespace: in a unity build the test files share one translation
// unit, and their helpers (Answer, fake_path...) must not meet.
namespace config_template_test {

namespace {

config::Template compiled(std::string_view text, const config::CaptureScope& scope = {}) {
    config::Template out;
    config::TemplateError error;
    REQUIRE(config::compile_template(text, scope, out, error));
    return out;
}

std::string error_of(std::string_view text, const config::CaptureScope& scope = {}) {
    config::Template out;
    config::TemplateError error;
    REQUIRE_FALSE(config::compile_template(text, scope, out, error));
    return std::to_string(error.offset) + ": " + error.message;
}

}  // namespace

TEST_CASE("a template without variables is literal", "[config][template]") {
    config::Template value = compiled("max-age=60");
    CHECK(value.is_literal());
    CHECK(value.source == "max-age=60");
    CHECK(compiled("").is_literal());
}

TEST_CASE("unknown variables and a lone dollar are refused with their offset",
          "[config][template]") {
    CHECK(error_of("https://$hots/").starts_with("8: unknown variable '$hots'"));
    CHECK(error_of("cost $ 5").starts_with("5: a '$' must start a variable name"));
    CHECK(error_of("${host").starts_with("0: '${' without a closing '}'"));
    CHECK(error_of("/new/$1").starts_with("5: '$1': no regex with groups applies here"));
    config::CaptureScope two{2, {{"sub", 1}}};
    CHECK(error_of("/$3", two).starts_with("1: '$3': the regex has only 2 group(s)"));
    CHECK_FALSE(compiled("/$2/$sub", two).is_literal());
}

TEST_CASE("templates expand every variable", "[config][template]") {
    http::Request request;
    request.method_name = "GET";
    request.target = "/a%20b?x=1";
    request.normalized_path = "/a b";
    request.query = "x=1";
    request.host = "WWW.Example.COM.:8080";
    request.server_name = "example.com";
    request.server_port = 8080;
    request.secure = true;
    request.headers = {{"X-Api-Key", "k1"}, {"cookie", "a=1; session=s2"}, {"x-api-key", "k2"}};
    http::PeerAddress client{};
    client.v4.sin_family = AF_INET;
    inet_pton(AF_INET, "192.0.2.7", &client.v4.sin_addr);
    config::CaptureScope scope{2, {{"name", 2}}};
    config::Template value = compiled(
        "$scheme://$host:$server_port$request_uri|$uri|$args|$remote_addr|$server_name|"
        "${http_x_api_key}|$cookie_session|$1-$name|$cookie_none.",
        scope);
    std::string_view captures[] = {"whole", "one", "two"};
    std::string out;
    http::expand(value, request, client, captures, out);
    CHECK(out ==
          "https://www.example.com:8080/a%20b?x=1|/a b|x=1|192.0.2.7|example.com|k1, "
          "k2|s2|one-two|.");

    std::string id;
    http::expand(compiled("$request_id"), request, client, {}, id);
    CHECK(id.size() == 32);
    CHECK(id.find_first_not_of("0123456789abcdef") == std::string::npos);
    std::string again;
    http::expand(compiled("$request_id"), request, client, {}, again);
    CHECK(again == id);  // one id per request
}

}  // namespace config_template_test
