// redirect, rewrite, respond 444 and error_pages against the real binary,
// each over HTTP/1.1 and HTTP/2 (h2c with prior knowledge on the same
// listener): what nginx's `return`, `rewrite` and `error_page` do.
#include <catch2/catch.hpp>

#include <string>

#include "http2_support.hpp"
#include "proxy_support.hpp"
#include "static_site.hpp"
#include "upstream_server.hpp"

using namespace portico::test;

// Its own namespace: in a unity build the test files share one translation
// unit, and their helpers (Answer, fake_path...) must not meet.
namespace rules_test {

namespace {

enum class Protocol { http1, http2 };

const char* name(Protocol protocol) {
    return protocol == Protocol::http1 ? "HTTP/1.1" : "HTTP/2";
}

// One response, whichever protocol carried it.
struct Answer {
    int status = 0;
    std::string location;
    std::string content_type;
    std::string content_length;
    std::string content_encoding;
    std::string set_cookie;
    std::string body;
    bool dropped = false;  // no response: the connection closed (1.1) or the stream was reset (2)
};

// `method` `target` on a new connection, Host a.test, with
// Accept-Encoding: `accept_encoding` and If-None-Match: `if_none_match`
// when not empty.
Answer ask(Protocol protocol, uint16_t port, const std::string& target,
           const std::string& method = "GET", const std::string& accept_encoding = "",
           const std::string& if_none_match = "") {
    Answer answer;
    if (protocol == Protocol::http1) {
        Client client(port);
        std::string extra =
            accept_encoding.empty() ? "" : "Accept-Encoding: " + accept_encoding + "\r\n";
        if (!if_none_match.empty()) extra += "If-None-Match: " + if_none_match + "\r\n";
        client.send(method + " " + target + " HTTP/1.1\r\nHost: a.test\r\n" + extra +
                    (method == "POST" ? "Content-Length: 4\r\n\r\nbody" : "\r\n"));
        auto response = client.read_response(5s, method == "HEAD");
        if (!response) {
            answer.dropped = client.closed_by_server(1s);
            return answer;
        }
        answer.status = response->status;
        answer.location = response->header("location");
        answer.content_type = response->header("content-type");
        answer.content_length = response->header("content-length");
        answer.content_encoding = response->header("content-encoding");
        answer.set_cookie = response->header("set-cookie");
        answer.body = response->body;
        return answer;
    }
    h2::Client client(port);
    h2::Fields extra;
    if (!accept_encoding.empty()) extra.emplace_back("accept-encoding", accept_encoding);
    if (!if_none_match.empty()) extra.emplace_back("if-none-match", if_none_match);
    uint32_t id = method == "POST"
                      ? client.request(h2::Client::request_fields("POST", target, "http", "a.test"),
                                       std::string("body"))
                      : client.get(target, extra, method);
    REQUIRE(client.wait_stream(id));
    const h2::StreamResult& result = client.result(id);
    answer.dropped = result.reset.has_value();
    answer.status = result.status;
    answer.location = result.header("location");
    answer.content_type = result.header("content-type");
    answer.content_length = result.header("content-length");
    answer.content_encoding = result.header("content-encoding");
    answer.set_cookie = result.header("set-cookie");
    answer.body = result.body;
    return answer;
}

std::string server_table() {
    return "[server]\nlisten = [\"{listen}\"]\nworkers = 1\n\n[http2]\ncleartext = true\n\n";
}

}  // namespace

TEST_CASE("rules: redirect answers every request of its location", "[rules]") {
    Portico portico(server_table() + R"(
[[location]]
prefix = "/go/"
redirect = { to = "https://example.com$request_uri", status = 301 }

[[location]]
regex = '^/photos/(\d+)$'
redirect = { to = "http://$host/pictures/$1", status = 308 }

[[location]]
prefix = "/decoded/"
redirect = { to = "https://example.com$uri" }

[[location]]
prefix = "/"
redirect = { to = "/moved" }
)");
    for (Protocol protocol : {Protocol::http1, Protocol::http2}) {
        INFO(name(protocol));
        Answer go = ask(protocol, portico.port(), "/go/a%20b?x=1&y");
        CHECK(go.status == 301);
        CHECK(go.location == "https://example.com/go/a%20b?x=1&y");  // the raw target
        CHECK(go.body == "301 Moved Permanently\n");
        CHECK(go.content_type == "text/plain; charset=utf-8");

        Answer photo = ask(protocol, portico.port(), "/photos/42");
        CHECK(photo.status == 308);
        CHECK(photo.location == "http://a.test/pictures/42");  // $host and the location's $1

        Answer other = ask(protocol, portico.port(), "/anything", "POST");
        CHECK(other.status == 302);  // nginx's `return URL`
        CHECK(other.location == "/moved");

        // $uri is decoded: a CR LF in it never splits the header.
        Answer decoded = ask(protocol, portico.port(), "/decoded/a%0d%0aSet-Cookie:%20x=1%20b");
        CHECK(decoded.status == 302);
        CHECK(decoded.location == "https://example.com/decoded/a%0D%0ASet-Cookie:%20x=1%20b");
        CHECK(decoded.set_cookie.empty());

        Answer head = ask(protocol, portico.port(), "/go/h", "HEAD");
        CHECK(head.status == 301);
        CHECK(head.location == "https://example.com/go/h");
        CHECK(head.body.empty());
    }
}

TEST_CASE("rules: rewrite with each flag, and the query as nginx keeps it", "[rules]") {
    Site site;
    site.write("new/page.html", "the new page\n");
    site.write("images/logo.txt", "logo\n");
    site.write("top.txt", "top\n");
    UpstreamServer upstream;  // "ok TARGET"
    Portico portico(server_table() + R"(
[[location]]
prefix = "/old/"
rewrite = [
  { from = '^/old/perm/(.*)$', to = '/new/$1', flag = "permanent" },
  { from = '^/old/temp/(.*)$', to = '/new/$1?from=old', flag = "redirect" },
  { from = '^/old/away/(.*)$', to = 'https://elsewhere.example/$1' },
  { from = '^/old/app/(?P<rest>.*)$', to = '/app/v2/$rest?v=2' },
  { from = '^/old/noquery/(.*)$', to = '/app/$1?' },
  { from = '^/old/(.*)$', to = '/new/$1', flag = "last" },
]

[[location]]
prefix = "/img/"
root = ")" + site.root() +
                    R"("
rewrite = [{ from = '^/img/(.*)$', to = '/images/$1', flag = "break" }]

[[location]]
prefix = "/app/"
proxy = "http://)" + upstream.address() +
                    R"("
rewrite = [{ from = '^/app/legacy/(.*)$', to = '/app/current/$1', flag = "break" }]

[[location]]
prefix = "/only/"
rewrite = [{ from = '^/only/a$', to = '/new/page.html' }]

[[location]]
prefix = "/loop/"
rewrite = [{ from = '^/loop/(.*)$', to = '/loop/x$1' }]

[[location]]
prefix = "/"
root = ")" + site.root() +
                    R"("
)");
    for (Protocol protocol : {Protocol::http1, Protocol::http2}) {
        INFO(name(protocol));
        uint16_t port = portico.port();

        Answer perm = ask(protocol, port, "/old/perm/page.html?q=1");
        CHECK(perm.status == 301);
        CHECK(perm.location == "/new/page.html?q=1");  // the query kept
        CHECK(perm.body == "301 Moved Permanently\n");

        Answer temp = ask(protocol, port, "/old/temp/page.html?q=1");
        CHECK(temp.status == 302);
        CHECK(temp.location == "/new/page.html?from=old&q=1");  // after the result's own

        Answer away = ask(protocol, port, "/old/away/x");
        CHECK(away.status == 302);  // an absolute result is a redirect, as in nginx
        CHECK(away.location == "https://elsewhere.example/x");

        // last: the location chosen again, a file of another location.
        Answer last = ask(protocol, port, "/old/page.html?q=1");
        CHECK(last.status == 200);
        CHECK(last.body == "the new page\n");

        // A capture is text, never decoded again: "%2e%2e" in it is no "..".
        Answer encoded = ask(protocol, port, "/old/%252e%252e/top.txt");
        CHECK(encoded.status == 404);

        // last into a proxy: the upstream gets the new path and the query.
        Answer proxied = ask(protocol, port, "/old/app/a%20b?q=1");
        CHECK(proxied.status == 200);
        CHECK(proxied.body == "ok /app/v2/a%20b?v=2&q=1");
        Answer dropped_query = ask(protocol, port, "/old/noquery/x?q=1");
        CHECK(dropped_query.body == "ok /app/x");

        // break: the same location serves the new URI (its file, its upstream).
        Answer image = ask(protocol, port, "/img/logo.txt");
        CHECK(image.status == 200);
        CHECK(image.body == "logo\n");
        Answer legacy = ask(protocol, port, "/app/legacy/y?z=1");
        CHECK(legacy.body == "ok /app/current/y?z=1");
        Answer untouched = ask(protocol, port, "/app/other?z=1");
        CHECK(untouched.body == "ok /app/other?z=1");

        // A rewrite-only location answers 404 for what its rules do not match.
        Answer only = ask(protocol, port, "/only/a");
        CHECK(only.status == 200);
        CHECK(only.body == "the new page\n");
        Answer unmatched = ask(protocol, port, "/only/b");
        CHECK(unmatched.status == 404);

        // More than 10 reroutes: 500, and the next request is served.
        Answer loop = ask(protocol, port, "/loop/a");
        CHECK(loop.status == 500);
        CHECK(ask(protocol, port, "/new/page.html").status == 200);
    }
    // Logged once (a second at most), not per request.
    CHECK(portico.wait_for_log("was rerouted more than 10 times"));
    std::string log = portico.log();
    size_t first = log.find("was rerouted more than 10 times");
    CHECK(log.find("was rerouted more than 10 times", first + 1) == std::string::npos);
}

TEST_CASE("rules: respond 444 closes without a response, and the next client is served",
          "[rules]") {
    TempDir logs;
    Portico portico(server_table() + "[log]\naccess = \"" + logs.path() + "/access.log\"\n" + R"(
[[location]]
prefix = "/drop"
respond = { status = 444 }

[[location]]
prefix = "/"
respond = { status = 200, body = "fine\n" }
)");
    // HTTP/1.1: not a byte, the connection closed.
    Client client(portico.port());
    client.send("GET /drop HTTP/1.1\r\nHost: a.test\r\n\r\n");
    auto text = client.read_until_close(5s);
    REQUIRE(text);
    CHECK(text->empty());
    Answer next = ask(Protocol::http1, portico.port(), "/");
    CHECK(next.status == 200);
    CHECK(next.body == "fine\n");

    // HTTP/2: the stream is reset, the connection goes on serving.
    h2::Client h2client(portico.port());
    uint32_t dropped = h2client.get("/drop");
    REQUIRE(h2client.wait_stream(dropped));
    INFO(h2client.trace());
    CHECK(h2client.result(dropped).reset.has_value());
    CHECK_FALSE(h2client.result(dropped).headers_received);
    uint32_t fine = h2client.get("/");
    REQUIRE(h2client.wait_stream(fine));
    CHECK(h2client.result(fine).status == 200);
    CHECK(h2client.result(fine).body == "fine\n");
    CHECK_FALSE(h2client.goaway());

    // Logged as nginx logs it: 444, nothing sent.
    auto dropped_lines = [&] {
        std::string log = read_text(logs.path() + "/access.log");
        int count = 0;
        for (size_t at = log.find("/drop HTTP/"); at != std::string::npos;
             at = log.find("/drop HTTP/", at + 1))
            count += log.compare(log.find('"', at) + 1, 7, " 444 0 ") == 0;
        return count;
    };
    CHECK(UpstreamServer::wait_until([&] { return dropped_lines() == 2; }, 5s));
}

TEST_CASE("rules: error_pages answer portico's and the upstream's errors with a page, status kept",
          "[rules]") {
    Site site;
    site.write("errors/404.html", "<h1>no such page</h1>\n");
    site.write("errors/maintenance.html", "<h1>back soon</h1>\n");
    site.write("squeezed/big.txt", std::string(4000, 'a'));
    UpstreamServer app([](const ReceivedRequest& request) {
        if (request.target == "/app/down")
            return Reply()
                .send(
                    "HTTP/1.1 503 Service Unavailable\r\nTransfer-Encoding: chunked\r\n\r\n"
                    "9\r\nthe app's\r\n")
                .pause(100ms)
                .send("9\r\n own body\r\n0\r\n\r\n");
        if (request.target == "/app/missing") return Reply::text(404, "app 404\n");
        return Reply::text(200, "ok " + request.method + " " + request.target);
    });
    std::string down = "127.0.0.1:" + std::to_string(unused_port());
    Portico portico(server_table() + R"(
[[location]]
prefix = "/app/"
proxy = "http://)" + app.address() +
                    R"("
error_pages = { 503 = "/errors/maintenance.html", 404 = "/errors/404.html" }

[[location]]
prefix = "/down/"
proxy = "http://)" + down +
                    R"("
error_pages = { 502 = "/errors/maintenance.html" }

[[location]]
prefix = "/teapot"
respond = { status = 418, body = "short and stout\n" }
error_pages = { 418 = "/errors/maintenance.html" }

[[location]]
prefix = "/broken/"
root = ")" + site.root() +
                    R"("
error_pages = { 404 = "/errors/gone.html" }

[[location]]
prefix = "/looping/"
root = ")" + site.root() +
                    R"("
error_pages = { 404 = "/looping/missing.html" }

[[location]]
prefix = "/misrouted/"
rewrite = [{ from = '^/misrouted/(.*)$', to = 'no-slash/$1' }]
error_pages = { 500 = "/errors/maintenance.html" }

[[location]]
prefix = "/moved/"
root = ")" + site.root() +
                    R"("
rewrite = [{ from = '^/moved/(.*)$', to = '/errors/$1', flag = "break" }]
error_pages = { 404 = "/errors/404.html" }

[[location]]
prefix = "/to-squeezed/"
root = ")" + site.root() +
                    R"("
error_pages = { 404 = "/squeezed/big.txt" }

[[location]]
prefix = "/squeezed/"
root = ")" + site.root() +
                    R"("
compress = true
error_pages = { 404 = "/errors/404.html" }

[[location]]
prefix = "/"
root = ")" + site.root() +
                    R"("
error_pages = { 404 = "/errors/404.html" }
)");
    for (Protocol protocol : {Protocol::http1, Protocol::http2}) {
        INFO(name(protocol));
        uint16_t port = portico.port();

        // A static 404.
        Answer missing = ask(protocol, port, "/nothing-here?x=1");
        CHECK(missing.status == 404);
        CHECK(missing.body == "<h1>no such page</h1>\n");
        CHECK(missing.content_type == "text/html; charset=utf-8");
        // HEAD: the page's head, no body.
        Answer head = ask(protocol, port, "/nothing-here", "HEAD");
        CHECK(head.status == 404);
        CHECK(head.content_length == "22");
        CHECK(head.body.empty());
        // The client's conditions were about its own URI: the page goes out whole.
        Answer conditional = ask(protocol, port, "/nothing-here", "GET", "", "*");
        CHECK(conditional.status == 404);
        CHECK(conditional.body == "<h1>no such page</h1>\n");
        // What is found is untouched.
        CHECK(ask(protocol, port, "/errors/404.html").status == 200);

        // The proxy's 502 (nothing listens), for a POST too (the page as a GET).
        Answer bad_gateway = ask(protocol, port, "/down/x", "POST");
        CHECK(bad_gateway.status == 502);
        CHECK(bad_gateway.body == "<h1>back soon</h1>\n");

        // The upstream's own 503, whose body streams: replaced by the page.
        Answer unavailable = ask(protocol, port, "/app/down");
        CHECK(unavailable.status == 503);
        CHECK(unavailable.body == "<h1>back soon</h1>\n");
        Answer app_missing = ask(protocol, port, "/app/missing");
        CHECK(app_missing.status == 404);
        CHECK(app_missing.body == "<h1>no such page</h1>\n");
        Answer app_fine = ask(protocol, port, "/app/fine");
        CHECK(app_fine.status == 200);
        CHECK(app_fine.body == "ok GET /app/fine");

        // respond's status.
        Answer teapot = ask(protocol, port, "/teapot");
        CHECK(teapot.status == 418);
        CHECK(teapot.body == "<h1>back soon</h1>\n");

        // The page is missing too: the original error as portico sends it.
        Answer broken = ask(protocol, port, "/broken/x");
        CHECK(broken.status == 404);
        CHECK(broken.body == "404 Not Found\n");
        // A page whose own answer is the error it stands for: no loop.
        Answer looping = ask(protocol, port, "/looping/x");
        CHECK(looping.status == 404);
        CHECK(looping.body == "404 Not Found\n");

        // A step's answer: the rewrite's 500 (its result is no path).
        Answer misrouted = ask(protocol, port, "/misrouted/x");
        CHECK(misrouted.status == 500);
        CHECK(misrouted.body == "<h1>back soon</h1>\n");
        // Steps that let the request go on: its file, or its 404's page.
        Answer moved = ask(protocol, port, "/moved/maintenance.html");
        CHECK(moved.status == 200);
        CHECK(moved.body == "<h1>back soon</h1>\n");
        Answer moved_missing = ask(protocol, port, "/moved/x");
        CHECK(moved_missing.status == 404);
        CHECK(moved_missing.body == "<h1>no such page</h1>\n");

        // A compressing location: its 404 gets the page, its files are compressed.
        Answer squeezed = ask(protocol, port, "/squeezed/x", "GET", "gzip");
        CHECK(squeezed.status == 404);
        CHECK(squeezed.body == "<h1>no such page</h1>\n");
        Answer big = ask(protocol, port, "/squeezed/big.txt", "GET", "gzip");
        CHECK(big.status == 200);
        CHECK(big.content_encoding == "gzip");
        CHECK(big.body.size() < 4000);
        // A page from a compressing location: compressed there, status kept.
        Answer to_squeezed = ask(protocol, port, "/to-squeezed/x", "GET", "gzip");
        CHECK(to_squeezed.status == 404);
        CHECK(to_squeezed.content_encoding == "gzip");
        CHECK(to_squeezed.body.size() < 4000);
        CHECK_FALSE(to_squeezed.body.empty());
    }
    // The upstream's 503 and 404 reached it once per protocol each.
    CHECK(app.request_count() == 6);
}

}  // namespace rules_test
