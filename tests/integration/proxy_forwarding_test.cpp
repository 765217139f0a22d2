// What goes upstream and what comes back: the request line byte for byte,
// hop-by-hop headers removed both ways, the X-Forwarded-* family, Host, and
// bodies in every framing (chunked, 10 MiB) arriving intact.
#include <catch2/catch.hpp>

#include "proxy_support.hpp"
#include "upstream_server.hpp"

using namespace portico::test;

TEST_CASE("method path and query go upstream as the client sent them", "[proxy]") {
    UpstreamServer upstream;
    Portico portico(proxy_config({upstream.address()}));
    Client client(portico.port());
    ResponseReader reader(client.fd());

    client.send(get_request("/a%20b/c?x=1&y=%2F"));
    auto response = reader.read();
    REQUIRE(response);
    CHECK(response->status == 200);
    CHECK(response->body == "ok /a%20b/c?x=1&y=%2F");
    auto request = upstream.last_request();
    CHECK(request.method == "GET");
    CHECK(request.target == "/a%20b/c?x=1&y=%2F");
    CHECK(request.version == "HTTP/1.1");

    // Not normalized on the way: the app sees what the client wrote.
    client.send(get_request("/a/./b/../c//d?q=%41&q=+"));
    REQUIRE(reader.read());
    CHECK(upstream.last_request().target == "/a/./b/../c//d?q=%41&q=+");

    for (std::string method : {"DELETE", "PUT", "PATCH", "OPTIONS", "POST"}) {
        client.send(method +
                    " /items/7?force=1 HTTP/1.1\r\nHost: front.example\r\n"
                    "Content-Length: 4\r\n\r\nbody");
        auto answer = reader.read();
        REQUIRE(answer);
        CHECK(answer->status == 200);
        request = upstream.last_request();
        CHECK(request.method == method);
        CHECK(request.target == "/items/7?force=1");
        CHECK(request.body == "body");
    }
}

TEST_CASE("an absolute-form target goes upstream in origin form with its host", "[proxy]") {
    UpstreamServer upstream;
    Portico portico(proxy_config({upstream.address()}));
    auto response = proxy_fetch(portico.port(),
                                "GET http://abs.example:8081/p?q HTTP/1.1\r\n"
                                "Host: other.example\r\n\r\n");
    REQUIRE(response);
    CHECK(response->status == 200);
    auto request = upstream.last_request();
    CHECK(request.target == "/p?q");
    CHECK(request.header("host") == "abs.example:8081");
    CHECK(request.count("host") == 1);
}

TEST_CASE("hop-by-hop request headers are not forwarded", "[proxy]") {
    UpstreamServer upstream;
    Portico portico(proxy_config({upstream.address()}));
    auto response = proxy_fetch(portico.port(), get_request("/hop",
                                                            "Connection: close, X-Secret\r\n"
                                                            "Keep-Alive: timeout=5\r\n"
                                                            "Proxy-Connection: keep-alive\r\n"
                                                            "TE: trailers\r\n"
                                                            "Trailer: X-Checksum\r\n"
                                                            "Upgrade: h2c\r\n"
                                                            "X-Secret: s3cr3t\r\n"
                                                            "X-Kept: yes\r\n"));
    REQUIRE(response);
    CHECK(response->status == 200);
    auto request = upstream.last_request();
    INFO(request.head);
    for (const char* name :
         {"keep-alive", "proxy-connection", "te", "trailer", "upgrade", "x-secret"})
        CHECK(request.count(name) == 0);
    CHECK(request.header("x-kept") == "yes");
    // The client's "close" is about the client connection; upstream the
    // proxy keeps its pooled connection (no Connection, or keep-alive).
    std::string connection = request.header("connection");
    CHECK((connection.empty() || contains_ignoring_case(connection, "keep-alive")));
    CHECK_FALSE(contains_ignoring_case(connection, "close"));
    CHECK_FALSE(contains_ignoring_case(connection, "x-secret"));
    // ...and so the next request reuses it.
    REQUIRE(proxy_fetch(portico.port(), get_request("/again")));
    CHECK(upstream.connections_accepted() == 1);
}

TEST_CASE("hop-by-hop response headers are not passed to the client", "[proxy]") {
    // RFC 9110 7.6.1: an intermediary removes them in both directions.
    UpstreamServer upstream([](const ReceivedRequest&) {
        return Reply::text(200, "hi",
                           "Connection: keep-alive, X-Hop\r\nKeep-Alive: timeout=10\r\n"
                           "X-Hop: 1\r\nX-End: 1\r\n");
    });
    Portico portico(proxy_config({upstream.address()}));
    auto response = proxy_fetch(portico.port(), get_request("/"));
    REQUIRE(response);
    INFO(response->head);
    CHECK(response->body == "hi");
    CHECK(response->header("x-end") == "1");
    CHECK(response->header("x-hop").empty());
    CHECK_FALSE(contains_ignoring_case(response->head, "timeout=10"));
    CHECK_FALSE(contains_ignoring_case(response->header("connection"), "x-hop"));
}

TEST_CASE("X-Forwarded-For -Proto -Host and X-Real-IP are added", "[proxy]") {
    UpstreamServer upstream;
    Portico portico(proxy_config({upstream.address()}));

    SECTION("appended to the client's X-Forwarded-For") {
        REQUIRE(proxy_fetch(portico.port(), get_request("/", "X-Forwarded-For: 1.2.3.4\r\n",
                                                        "front.example:8080")));
        auto request = upstream.last_request();
        INFO(request.head);
        CHECK(request.header("x-forwarded-for") == "1.2.3.4, 127.0.0.1");
        CHECK(request.count("x-forwarded-for") == 1);
        CHECK(request.header("x-forwarded-proto") == "http");
        CHECK(request.header("x-forwarded-host") == "front.example:8080");
        CHECK(request.header("x-real-ip") == "127.0.0.1");
    }
    SECTION("created when the client sent none") {
        REQUIRE(proxy_fetch(portico.port(), get_request("/")));
        auto request = upstream.last_request();
        INFO(request.head);
        CHECK(request.header("x-forwarded-for") == "127.0.0.1");
        CHECK(request.header("x-forwarded-host") == "front.example");
        CHECK(request.count("x-real-ip") == 1);
    }
    SECTION("a client cannot choose its X-Real-IP") {
        REQUIRE(proxy_fetch(portico.port(), get_request("/", "X-Real-IP: 6.6.6.6\r\n")));
        auto request = upstream.last_request();
        INFO(request.head);
        CHECK(request.header("x-real-ip") == "127.0.0.1");
        CHECK(request.count("x-real-ip") == 1);
    }
}

TEST_CASE("several X-Forwarded-For lines are one list and the client is appended", "[proxy]") {
    // RFC 9110 5.3: repeated field lines are one comma-separated list; a
    // proxy that keeps only the last line drops hops from the chain.
    UpstreamServer upstream;
    Portico portico(proxy_config({upstream.address()}));
    REQUIRE(proxy_fetch(portico.port(), get_request("/",
                                                    "X-Forwarded-For: 1.1.1.1\r\n"
                                                    "X-Forwarded-For: 2.2.2.2, 3.3.3.3\r\n")));
    auto request = upstream.last_request();
    INFO(request.head);
    CHECK(request.header("x-forwarded-for") == "1.1.1.1, 2.2.2.2, 3.3.3.3, 127.0.0.1");
    CHECK(request.count("x-forwarded-for") == 1);
}

TEST_CASE("preserve_host decides which Host the upstream sees", "[proxy]") {
    UpstreamServer upstream;
    SECTION("true (the default): the client's Host") {
        Portico portico(proxy_config({upstream.address()}));
        REQUIRE(proxy_fetch(portico.port(), get_request("/", "", "front.example:8080")));
        CHECK(upstream.last_request().header("host") == "front.example:8080");
        CHECK(upstream.last_request().count("host") == 1);
    }
    SECTION("false: the upstream's name (proxy_host_test.cpp has the inline URL's)") {
        Portico portico(proxy_config({upstream.address()}, "", "preserve_host = false"));
        REQUIRE(proxy_fetch(portico.port(), get_request("/", "", "front.example:8080")));
        CHECK(upstream.last_request().header("host") == "app");
        CHECK(upstream.last_request().count("host") == 1);
        // X-Forwarded-Host still tells the app what the client asked for.
        CHECK(upstream.last_request().header("x-forwarded-host") == "front.example:8080");
    }
}

TEST_CASE("an inline proxy = http://host:port upstream works", "[proxy]") {
    UpstreamServer upstream;
    Portico portico(
        "[server]\nlisten = [\"{listen}\"]\nworkers = 1\n\n"
        "[[location]]\nprefix = \"/\"\nproxy = \"http://" +
        upstream.address() + "\"\npreserve_host = false\n");
    auto response = proxy_fetch(portico.port(), get_request("/inline?x"));
    REQUIRE(response);
    CHECK(response->status == 200);
    CHECK(response->body == "ok /inline?x");
    CHECK(upstream.last_request().header("host") == upstream.address());
}

TEST_CASE("a chunked request body and a chunked response cross the proxy whole", "[proxy]") {
    UpstreamServer upstream([](const ReceivedRequest& request) {
        return Reply::chunked({"[", request.body, "]"}, 0ms);
    });
    Portico portico(proxy_config({upstream.address()}));
    Client client(portico.port());
    ResponseReader reader(client.fd());
    client.send(
        "POST /echo HTTP/1.1\r\nHost: front.example\r\nTransfer-Encoding: chunked\r\n\r\n"
        "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n");
    auto response = reader.read();
    REQUIRE(response);
    CHECK(response->status == 200);
    CHECK(response->body == "[hello world]");
    auto request = upstream.last_request();
    CHECK(request.body == "hello world");
    // One framing upstream, never both (request smuggling).
    CHECK(request.count("content-length") + (request.chunked ? 1 : 0) == 1);
    // The connection is still in step for the next request.
    client.send(get_request("/next"));
    auto next = reader.read();
    REQUIRE(next);
    CHECK(next->body == "[]");
}

TEST_CASE("a 10 MiB request body arrives upstream intact", "[proxy]") {
    const size_t size = 10u << 20;
    UpstreamServer upstream([](const ReceivedRequest& request) {
        return Reply::text(200, std::to_string(request.body.size()));
    });
    Portico portico(proxy_config({upstream.address()}));
    std::string payload = random_bytes(size, 7);
    Client client(portico.port());
    client.send("POST /upload HTTP/1.1\r\nHost: front.example\r\nContent-Length: " +
                std::to_string(size) + "\r\n\r\n" + payload);
    ResponseReader reader(client.fd());
    auto response = reader.read(20s);
    REQUIRE(response);
    CHECK(response->status == 200);
    CHECK(response->body == std::to_string(size));
    auto request = upstream.last_request();
    CHECK(request.body.size() == size);
    bool intact = request.body == payload;
    CHECK(intact);
}

TEST_CASE("a 10 MiB response reaches the client intact", "[proxy]") {
    const size_t size = 10u << 20;
    UpstreamServer upstream([=](const ReceivedRequest&) { return Reply::pattern(size); });
    Portico portico(proxy_config({upstream.address()}));
    auto response = proxy_fetch(portico.port(), get_request("/download"), 20s);
    REQUIRE(response);
    CHECK(response->status == 200);
    CHECK(response->body.size() == size);
    bool intact = response->body == pattern_bytes(0, size);
    CHECK(intact);
}

TEST_CASE("HEAD 204 and 304 responses carry no body and keep both connections in step", "[proxy]") {
    UpstreamServer upstream([](const ReceivedRequest& request) {
        if (request.method == "HEAD")
            return Reply::raw("HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n",
                              Reply::Then::keep_alive);
        if (request.target == "/empty")
            return Reply::raw("HTTP/1.1 204 No Content\r\n\r\n", Reply::Then::keep_alive);
        if (request.target == "/cached")  // the length of the representation, no body
            return Reply::raw(
                "HTTP/1.1 304 Not Modified\r\nETag: \"v1\"\r\n"
                "Content-Length: 500\r\n\r\n",
                Reply::Then::keep_alive);
        return answer_ok(request);
    });
    Portico portico(proxy_config({upstream.address()}));
    Client client(portico.port());
    ResponseReader reader(client.fd());
    client.send("HEAD /thing HTTP/1.1\r\nHost: front.example\r\n\r\n");
    auto head = reader.read(5s, true);
    REQUIRE(head);
    CHECK(head->status == 200);
    CHECK(head->header("content-length") == "1234");
    client.send(get_request("/empty"));
    auto empty = reader.read();
    REQUIRE(empty);
    CHECK(empty->status == 204);
    client.send(get_request("/cached", "If-None-Match: \"v1\"\r\n"));
    auto cached = reader.read();
    REQUIRE(cached);
    CHECK(cached->status == 304);
    client.send(get_request("/after"));
    auto after = reader.read();
    REQUIRE(after);
    CHECK(after->body == "ok /after");
    CHECK(upstream.connections_accepted() == 1);
}

TEST_CASE("pipelined requests are proxied and answered in order", "[proxy]") {
    UpstreamServer upstream;
    Portico portico(proxy_config({upstream.address()}));
    Client client(portico.port());
    ResponseReader reader(client.fd());
    client.send(get_request("/one") + get_request("/two") + get_request("/three"));
    for (std::string expected : {"ok /one", "ok /two", "ok /three"}) {
        auto response = reader.read();
        REQUIRE(response);
        CHECK(response->body == expected);
    }
}

TEST_CASE("an HTTP/1.0 client gets a body it can read from a chunked upstream", "[proxy]") {
    UpstreamServer upstream([](const ReceivedRequest&) {
        return Reply::chunked({"part one, ", "part two"}, 0ms);
    });
    Portico portico(proxy_config({upstream.address()}));
    Client client(portico.port());
    client.send("GET /old HTTP/1.0\r\nHost: front.example\r\n\r\n");
    ResponseReader reader(client.fd());
    auto head = reader.read_head();
    REQUIRE(head);
    INFO(head->head);
    // HTTP/1.0 has no chunked coding: a length, or the end of the connection.
    CHECK_FALSE(contains_ignoring_case(head->header("transfer-encoding"), "chunked"));
    auto body = reader.read_body(*head, 5s);
    REQUIRE(body);
    CHECK(*body == "part one, part two");
    // Upstream the exchange was still HTTP/1.1 and pooled.
    REQUIRE(proxy_fetch(portico.port(), get_request("/new")));
    CHECK(upstream.connections_accepted() == 1);
}

TEST_CASE("pipelined requests to the upstream and to a local location keep their order",
          "[proxy]") {
    UpstreamServer upstream(
        [](const ReceivedRequest& request) { return answer_ok(request).delayed(300ms); });
    Portico portico(
        "[server]\nlisten = [\"{listen}\"]\nworkers = 1\n\n"
        "[upstream.app]\nservers = [\"" +
        upstream.address() +
        "\"]\n\n"
        "[[location]]\nexact = \"/health\"\n"
        "respond = { status = 200, body = \"healthy\" }\n\n"
        "[[location]]\nprefix = \"/\"\nproxy = \"app\"\n");
    Client client(portico.port());
    ResponseReader reader(client.fd());
    client.send(get_request("/slow") + get_request("/health") + get_request("/slow2"));
    for (std::string expected : {"ok /slow", "healthy", "ok /slow2"}) {
        auto response = reader.read();
        REQUIRE(response);
        CHECK(response->body == expected);
    }
}

TEST_CASE("Expect: 100-continue works through the proxy", "[proxy]") {
    UpstreamServer upstream(
        [](const ReceivedRequest& request) { return Reply::text(200, "got " + request.body); });
    Portico portico(proxy_config({upstream.address()}));
    Client client(portico.port());
    ResponseReader reader(client.fd());
    client.send(
        "POST /upload HTTP/1.1\r\nHost: front.example\r\nContent-Length: 5\r\n"
        "Expect: 100-continue\r\n\r\n");
    auto interim = reader.read(3s);
    REQUIRE(interim);
    CHECK(interim->status == 100);
    client.send("hello");
    auto response = reader.read();
    REQUIRE(response);
    CHECK(response->status == 200);
    CHECK(response->body == "got hello");
}

TEST_CASE("interim 1xx responses from the upstream do not end the exchange", "[proxy]") {
    UpstreamServer upstream([](const ReceivedRequest& request) {
        std::string body = "ok " + request.target;
        return Reply::raw(
            "HTTP/1.1 100 Continue\r\n\r\n"
            "HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n"
            "HTTP/1.1 200 OK\r\nContent-Length: " +
                std::to_string(body.size()) + "\r\n\r\n" + body,
            Reply::Then::keep_alive);
    });
    Portico portico(proxy_config({upstream.address()}));
    Client client(portico.port());
    ResponseReader reader(client.fd());
    for (std::string target : {"/first", "/second"}) {
        client.send(get_request(target));
        // The proxy may pass the 1xx on or drop them; the final one must come.
        std::optional<Response> response;
        for (int i = 0; i < 3; ++i) {
            response = reader.read(3s);
            if (!response || response->status >= 200) break;
        }
        REQUIRE(response);
        CHECK(response->status == 200);
        CHECK(response->body == "ok " + target);
    }
}

// RFC 9112 5.1: whitespace between a field name and its colon is a 400, never
// forwarded (an app that trims it and a proxy that does not disagree on the
// header: a request-smuggling lever).
TEST_CASE("whitespace before a header's colon is 400 and never reaches the upstream", "[proxy][bad-input]") {
    UpstreamServer upstream;
    Portico portico(proxy_config({upstream.address()}));
    for (std::string field : {"X-Bad : 1", "X-Bad\t: 1", "Content-Length : 0", "X-Bad  \t : 1"}) {
        INFO(field);
        Client client(portico.port());
        client.send("GET /p HTTP/1.1\r\nHost: front.example\r\n" + field + "\r\n\r\n");
        auto response = client.read_response();
        REQUIRE(response);
        CHECK(response->status == 400);
        CHECK(response->header("connection") == "close");
        CHECK(client.closed_by_server());
        // The next client is served as usual.
        auto next = proxy_fetch(portico.port(), get_request("/next"));
        REQUIRE(next);
        CHECK(next->status == 200);
    }
    // Only the good requests went upstream.
    for (const ReceivedRequest& request : upstream.requests()) CHECK(request.target == "/next");
    CHECK(upstream.request_count() == 4);
}
