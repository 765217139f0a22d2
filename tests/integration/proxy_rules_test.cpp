// A location's rules on the proxied request and response, over HTTP/1.1 and
// HTTP/2 against a real upstream: a path in `proxy` replacing the matched
// prefix (nginx's proxy_pass with a URI), proxy_headers, hide_headers,
// templated headers with headers_always, and X-Request-ID.
#include <catch2/catch.hpp>

#include <map>
#include <optional>
#include <string>

#include "http2_support.hpp"
#include "proxy_support.hpp"
#include "upstream_server.hpp"

using namespace portico::test;

// Its own namespace: in a unity build the test files share one translation
// unit, and their helpers (Answer, fake_path...) must not meet.
namespace proxy_rules_test {

namespace {

enum class Protocol { http1, http2 };

// A response, whichever protocol carried it: header names lowercase.
struct Answer {
    int status = 0;
    std::map<std::string, std::string> headers;
    std::string body;
    std::string header(const std::string& name) const {
        auto found = headers.find(name);
        return found == headers.end() ? "" : found->second;
    }
    bool has(const std::string& name) const { return headers.count(name) > 0; }
};

// GET `target` with `extra` headers (lowercase names) on a new connection.
std::optional<Answer> get(Protocol protocol, uint16_t port, const std::string& target,
                          const h2::Fields& extra = {}) {
    Answer answer;
    if (protocol == Protocol::http1) {
        std::string lines;
        for (const auto& [name, value] : extra) lines += name + ": " + value + "\r\n";
        auto response = proxy_fetch(port, get_request(target, lines));
        if (!response) return std::nullopt;
        answer.status = response->status;
        answer.headers = response->headers;
        answer.body = response->body;
        return answer;
    }
    h2::Client client(port);
    uint32_t id = client.get(target, extra, "GET", "front.example");
    if (!client.wait_stream(id)) return std::nullopt;
    const h2::StreamResult& result = client.result(id);
    answer.status = result.status;
    for (const auto& [name, value] : result.headers) answer.headers.emplace(name, value);
    answer.body = result.body;
    return answer;
}

// One worker, h2c beside HTTP/1.1, and `locations` (TOML) in which
// "{upstream}" stands for the upstream's address.
std::string rules_config(const std::string& locations, const std::string& upstream) {
    std::string text = locations;
    for (size_t at; (at = text.find("{upstream}")) != std::string::npos;)
        text.replace(at, 10, upstream);
    return "[server]\nlisten = [\"{listen}\"]\nworkers = 1\n[http2]\ncleartext = true\n\n" + text;
}

bool is_request_id(const std::string& text) {
    return text.size() == 32 && text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

}  // namespace

TEST_CASE("a path in proxy replaces the matched prefix, as nginx's proxy_pass with a URI",
          "[proxy-rules]") {
    UpstreamServer upstream;
    Portico portico(
        rules_config("[[location]]\nprefix = \"/api/\"\nproxy = \"http://{upstream}/v1/\"\n"
                     "[[location]]\nprefix = \"/root/\"\nproxy = \"http://{upstream}/\"\n"
                     "[[location]]\nprefix = \"/short\"\nproxy = \"http://{upstream}/long\"\n"
                     "[[location]]\nprefix = \"/\"\nproxy = \"http://{upstream}\"\n",
                     upstream.address()));
    struct Case {
        const char* sent;
        const char* upstream_gets;
    };
    const Case cases[] = {
        {"/api/x?q=1", "/v1/x?q=1"},
        {"/api/", "/v1/"},
        {"/api/a/b?x=%2F&y", "/v1/a/b?x=%2F&y"},
        {"/root/x", "/x"},  // nginx: `location /root/ { proxy_pass http://b/; }`
        {"/short/x", "/long/x"},
        {"/shortcut", "/longcut"},  // a byte prefix, as nginx matches it
        // The rest goes normalized and encoded again (nginx), the query as received.
        {"/api/a%20b/./c//d/../e?q=%41", "/v1/a%20b/c/e?q=%41"},
        {"/api/caf%C3%A9", "/v1/caf%C3%A9"},
        // "/shortx/../short/y" is "/short/y" once normalized: its raw rest
        // ("x/../short/y") must not climb out of "/long" upstream.
        {"/shortx/../short/y", "/long/y"},
        // Without a path in proxy: as received, not normalized.
        {"/other/./x?q", "/other/./x?q"},
    };
    for (Protocol protocol : {Protocol::http1, Protocol::http2}) {
        for (const Case& c : cases) {
            INFO((protocol == Protocol::http1 ? "HTTP/1.1 " : "HTTP/2 ") << c.sent);
            auto answer = get(protocol, portico.port(), c.sent);
            REQUIRE(answer);
            CHECK(answer->status == 200);
            CHECK(upstream.last_request().target == c.upstream_gets);
        }
    }
}

TEST_CASE("proxy_headers set, replace and remove request headers", "[proxy-rules]") {
    UpstreamServer upstream;
    Portico portico(rules_config(
        "[[location]]\nprefix = \"/\"\nproxy = \"http://{upstream}\"\n"
        "proxy_headers = { X-Forwarded-Scheme = \"$scheme\", Accept-Encoding = \"\", "
        "X-Forwarded-For = \"$remote_addr\", X-Real-IP = \"\", Host = \"app.internal\", "
        "X-Client = \"$http_user_agent/$cookie_sid\", X-Empty = \"$http_x_missing\", "
        "X-Uri = \"$uri\" }\n"
        "[[location]]\nregex = '^/u/(?P<user>[a-z]+)/([0-9]+)$'\nproxy = \"http://{upstream}\"\n"
        "proxy_headers = { X-User = \"$user:$2\" }\nheaders = { X-User = \"$user\" }\n",
        upstream.address()));
    for (Protocol protocol : {Protocol::http1, Protocol::http2}) {
        INFO((protocol == Protocol::http1 ? "HTTP/1.1" : "HTTP/2"));
        auto answer = get(protocol, portico.port(), "/p",
                          {{"accept-encoding", "gzip"},
                           {"x-forwarded-for", "6.6.6.6"},
                           {"user-agent", "ua"},
                           {"cookie", "a=1; sid=s42"},
                           {"x-empty", "from the client"}});
        REQUIRE(answer);
        CHECK(answer->status == 200);
        ReceivedRequest request = upstream.last_request();
        INFO(request.head);
        CHECK(request.header("x-forwarded-scheme") == "http");
        CHECK_FALSE(request.has("accept-encoding"));
        // Replaces portico's default (which appends to the client's list).
        CHECK(request.header("x-forwarded-for") == "127.0.0.1");
        CHECK(request.count("x-forwarded-for") == 1);
        CHECK_FALSE(request.has("x-real-ip"));
        CHECK(request.header("host") == "app.internal");
        CHECK(request.count("host") == 1);
        CHECK(request.header("x-client") == "ua/s42");
        // Empty once expanded: not sent, and the client's is not either.
        CHECK_FALSE(request.has("x-empty"));
        // The defaults no rule names are still there.
        CHECK(request.header("x-forwarded-proto") == "http");
        CHECK(request.header("x-forwarded-host") == "front.example");

        // A regex location's captures, named and numbered, both ways.
        auto user = get(protocol, portico.port(), "/u/ann/42");
        REQUIRE(user);
        CHECK(upstream.last_request().header("x-user") == "ann:42");
        CHECK(user->header("x-user") == "ann");
    }
}

TEST_CASE("a decoded CR LF in a header template cannot split the upstream request",
          "[proxy-rules]") {
    UpstreamServer upstream;
    Portico portico(
        rules_config("[[location]]\nprefix = \"/\"\nproxy = \"http://{upstream}\"\n"
                     "proxy_headers = { X-Uri = \"$uri\" }\nheaders = { X-Echo = \"$uri\" }\n",
                     upstream.address()));
    for (Protocol protocol : {Protocol::http1, Protocol::http2}) {
        INFO((protocol == Protocol::http1 ? "HTTP/1.1" : "HTTP/2"));
        auto answer = get(protocol, portico.port(), "/a%0D%0AX-Evil:%201");
        REQUIRE(answer);
        CHECK(answer->status == 200);
        ReceivedRequest request = upstream.last_request();
        INFO(request.head);
        CHECK(request.header("x-uri") == "/a%0D%0AX-Evil: 1");
        CHECK_FALSE(request.has("x-evil"));
        CHECK(answer->header("x-echo") == "/a%0D%0AX-Evil: 1");
        CHECK_FALSE(answer->has("x-evil"));
        // And the server serves the next client.
        auto next = get(protocol, portico.port(), "/next");
        REQUIRE(next);
        CHECK(next->status == 200);
    }
}

TEST_CASE("hide_headers removes the upstream's headers from the response", "[proxy-rules]") {
    UpstreamServer upstream([](const ReceivedRequest&) {
        return Reply::text(200, "hi",
                           "X-Powered-By: Express\r\nx-powered-by: again\r\n"
                           "Server-Timing: db;dur=53\r\nX-Kept: yes\r\n");
    });
    Portico portico(
        rules_config("[[location]]\nprefix = \"/\"\nproxy = \"http://{upstream}\"\n"
                     "hide_headers = [\"X-Powered-By\", \"server-timing\"]\n"
                     "[[location]]\nprefix = \"/all/\"\nproxy = \"http://{upstream}\"\n",
                     upstream.address()));
    for (Protocol protocol : {Protocol::http1, Protocol::http2}) {
        INFO((protocol == Protocol::http1 ? "HTTP/1.1" : "HTTP/2"));
        auto hidden = get(protocol, portico.port(), "/");
        REQUIRE(hidden);
        CHECK(hidden->body == "hi");
        CHECK_FALSE(hidden->has("x-powered-by"));
        CHECK_FALSE(hidden->has("server-timing"));
        CHECK(hidden->header("x-kept") == "yes");
        // Another location's responses keep them.
        auto kept = get(protocol, portico.port(), "/all/");
        REQUIRE(kept);
        CHECK(kept->has("x-powered-by"));
    }
}

TEST_CASE("headers are templates, sent on 2xx and 3xx, and on any status with headers_always",
          "[proxy-rules]") {
    UpstreamServer upstream([](const ReceivedRequest& request) {
        if (request.target.ends_with("/missing")) return Reply::text(404, "no");
        if (request.target.ends_with("/moved"))
            return Reply::text(301, "", "Location: /elsewhere\r\n");
        return Reply::text(200, "ok");
    });
    uint16_t down = unused_port();
    Portico portico(
        rules_config("[[location]]\nprefix = \"/\"\nproxy = \"http://{upstream}\"\n"
                     "headers = { X-Id = \"$request_id\", X-Site = \"$scheme://$host\", "
                     "X-Session = \"$cookie_sid\", X-Static = \"fixed\" }\n"
                     "[[location]]\nprefix = \"/always/\"\nproxy = \"http://{upstream}\"\n"
                     "headers = { X-Frame-Options = \"DENY\" }\nheaders_always = true\n"
                     "[[location]]\nprefix = \"/down/\"\nproxy = \"http://127.0.0.1:" +
                         std::to_string(down) +
                         "\"\nheaders = { X-Frame-Options = \"DENY\" }\nheaders_always = true\n"
                         "[[location]]\nexact = \"/teapot\"\nrespond = { status = 418 }\n"
                         "headers = { X-Frame-Options = \"DENY\" }\n",
                     upstream.address()));
    for (Protocol protocol : {Protocol::http1, Protocol::http2}) {
        INFO((protocol == Protocol::http1 ? "HTTP/1.1" : "HTTP/2"));
        auto ok = get(protocol, portico.port(), "/page");
        REQUIRE(ok);
        CHECK(ok->status == 200);
        // $request_id is the X-Request-ID the upstream got.
        CHECK(is_request_id(ok->header("x-id")));
        CHECK(ok->header("x-id") == upstream.last_request().header("x-request-id"));
        CHECK(ok->header("x-site") == "http://front.example");
        CHECK_FALSE(ok->has("x-session"));  // expands to "": not sent
        CHECK(ok->header("x-static") == "fixed");

        auto moved = get(protocol, portico.port(), "/moved");
        REQUIRE(moved);
        CHECK(moved->status == 301);
        CHECK(moved->header("x-static") == "fixed");

        // nginx's add_header leaves a 404 alone...
        auto missing = get(protocol, portico.port(), "/missing");
        REQUIRE(missing);
        CHECK(missing->status == 404);
        CHECK_FALSE(missing->has("x-static"));
        auto teapot = get(protocol, portico.port(), "/teapot");
        REQUIRE(teapot);
        CHECK(teapot->status == 418);
        CHECK_FALSE(teapot->has("x-frame-options"));
        // ...unless `always`: the upstream's 404, and portico's own 502.
        auto always = get(protocol, portico.port(), "/always/missing");
        REQUIRE(always);
        CHECK(always->status == 404);
        CHECK(always->header("x-frame-options") == "DENY");
        auto bad_gateway = get(protocol, portico.port(), "/down/x");
        REQUIRE(bad_gateway);
        CHECK(bad_gateway->status == 502);
        CHECK(bad_gateway->header("x-frame-options") == "DENY");
    }
}

TEST_CASE("every proxied request carries an X-Request-ID of its own", "[proxy-rules]") {
    UpstreamServer upstream;
    Portico portico(
        rules_config("[[location]]\nprefix = \"/\"\nproxy = \"http://{upstream}\"\n"
                     "[[location]]\nprefix = \"/none/\"\nproxy = \"http://{upstream}\"\n"
                     "proxy_headers = { X-Request-ID = \"\" }\n"
                     "[[location]]\nprefix = \"/mine/\"\nproxy = \"http://{upstream}\"\n"
                     "proxy_headers = { X-Request-ID = \"app-$request_id\" }\n",
                     upstream.address()));
    for (Protocol protocol : {Protocol::http1, Protocol::http2}) {
        INFO((protocol == Protocol::http1 ? "HTTP/1.1" : "HTTP/2"));
        REQUIRE(get(protocol, portico.port(), "/a", {{"x-request-id", "client-chosen"}}));
        std::string first = upstream.last_request().header("x-request-id");
        CHECK(is_request_id(first));
        CHECK(upstream.last_request().count("x-request-id") == 1);
        REQUIRE(get(protocol, portico.port(), "/b"));
        std::string second = upstream.last_request().header("x-request-id");
        CHECK(is_request_id(second));
        CHECK(second != first);

        REQUIRE(get(protocol, portico.port(), "/none/", {{"x-request-id", "client-chosen"}}));
        CHECK_FALSE(upstream.last_request().has("x-request-id"));
        REQUIRE(get(protocol, portico.port(), "/mine/"));
        std::string mine = upstream.last_request().header("x-request-id");
        CHECK(mine.starts_with("app-"));
        CHECK(is_request_id(mine.substr(4)));
    }
}

TEST_CASE("a proxied prefix's path without its slash is redirected to it, as nginx does",
          "[proxy-rules]") {
    UpstreamServer upstream;
    Portico portico(
        rules_config("[[location]]\nprefix = \"/api/\"\nproxy = \"{upstream}\"\n"
                     "[[location]]\nprefix = \"/files/\"\nproxy = \"{upstream}\"\n"
                     "[[location]]\nexact = \"/files\"\nrespond = { body = \"mine\" }\n"
                     "[[location]]\nprefix = \"/\"\nrespond = { body = \"spa\" }\n",
                     "http://" + upstream.address()));
    for (Protocol protocol : {Protocol::http1, Protocol::http2}) {
        INFO((protocol == Protocol::http1 ? "HTTP/1.1" : "HTTP/2"));
        auto answer = get(protocol, portico.port(), "/api?page=2");
        REQUIRE(answer);
        CHECK(answer->status == 301);
        CHECK(answer->header("location") == "/api/?page=2");
        // An exact location of the file wins over the redirect.
        answer = get(protocol, portico.port(), "/files");
        REQUIRE(answer);
        CHECK(answer->status == 200);
        CHECK(answer->body == "mine");
        // Only the path itself: a longer one is the other locations'.
        answer = get(protocol, portico.port(), "/apix");
        REQUIRE(answer);
        CHECK(answer->body == "spa");
        answer = get(protocol, portico.port(), "/api/x");
        REQUIRE(answer);
        CHECK(upstream.last_request().target == "/api/x");
    }
}

}  // namespace proxy_rules_test
