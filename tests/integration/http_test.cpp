// HTTP/1.x client-side behaviour on the real binary: keep-alive, pipelining,
// HTTP/1.0, HEAD, Expect: 100-continue, chunked request bodies.
#include <catch2/catch.hpp>

#include <thread>

#include "harness.hpp"

using namespace portico::test;

namespace {

const std::string http_config = R"(
[server]
listen = ["{listen}"]
workers = 1
keepalive_requests = 5

[[location]]
exact = "/health"
respond = { status = 200, body = "ok\n" }
headers = { "X-Frame-Options" = "DENY" }

[[location]]
prefix = "/"
respond = { status = 200, body = "root\n" }
)";

}  // namespace

TEST_CASE("keep-alive serves several requests on one connection", "[http]") {
    Portico portico(http_config);
    Client client(portico.port());
    for (int i = 0; i < 3; ++i) {
        client.send("GET /health HTTP/1.1\r\nHost: t\r\n\r\n");
        auto response = client.read_response();
        REQUIRE(response);
        CHECK(response->status == 200);
        CHECK(response->body == "ok\n");
        CHECK(response->header("connection").empty());
        CHECK(response->header("x-frame-options") == "DENY");
        CHECK(response->header("server") == "portico");
        CHECK(response->header("date").size() == 29);
    }
}

TEST_CASE("keepalive_requests closes the connection after the last allowed request", "[http]") {
    Portico portico(http_config);
    Client client(portico.port());
    for (int i = 1; i <= 5; ++i) {
        client.send("GET /health HTTP/1.1\r\nHost: t\r\n\r\n");
        auto response = client.read_response();
        REQUIRE(response);
        CHECK(response->header("connection") == (i == 5 ? "close" : ""));
    }
    CHECK(client.closed_by_server());
}

TEST_CASE("pipelined requests are answered in order", "[http]") {
    Portico portico(http_config);
    Client client(portico.port());
    client.send("GET /health HTTP/1.1\r\nHost: t\r\n\r\n"
                "GET /other HTTP/1.1\r\nHost: t\r\n\r\n"
                "HEAD /health HTTP/1.1\r\nHost: t\r\n\r\n"
                "GET /health HTTP/1.1\r\nHost: t\r\n\r\n");
    auto first = client.read_response();
    auto second = client.read_response();
    auto third = client.read_response(5s, true);
    auto fourth = client.read_response();
    REQUIRE(first);
    REQUIRE(second);
    REQUIRE(third);
    REQUIRE(fourth);
    CHECK(first->body == "ok\n");
    CHECK(second->body == "root\n");
    CHECK(third->header("content-length") == "3");
    CHECK(fourth->body == "ok\n");
}

TEST_CASE("a pipelined request split across reads is still parsed", "[http]") {
    Portico portico(http_config);
    Client client(portico.port());
    client.send("GET /health HTTP/1.1\r\nHost: t\r\n\r\nGET /hea");
    std::this_thread::sleep_for(50ms);
    client.send("lth HTTP/1.1\r\nHo");
    std::this_thread::sleep_for(50ms);
    client.send("st: t\r\n\r\n");
    auto first = client.read_response();
    auto second = client.read_response();
    REQUIRE(first);
    REQUIRE(second);
    CHECK(second->status == 200);
    CHECK(second->body == "ok\n");
}

TEST_CASE("HTTP/1.0 closes by default and keeps the connection when asked", "[http]") {
    Portico portico(http_config);
    {
        Client client(portico.port());
        client.send("GET /health HTTP/1.0\r\n\r\n");
        auto response = client.read_response();
        REQUIRE(response);
        CHECK(response->head.rfind("HTTP/1.1 200", 0) == 0);
        CHECK(response->header("connection") == "close");
        CHECK(client.closed_by_server());
    }
    {
        Client client(portico.port());
        client.send("GET /health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
        auto response = client.read_response();
        REQUIRE(response);
        CHECK(response->header("connection") == "keep-alive");
        client.send("GET /health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
        CHECK(client.read_response());
    }
}

TEST_CASE("HEAD answers the GET head without a body", "[http]") {
    Portico portico(http_config);
    Client client(portico.port());
    client.send("HEAD /health HTTP/1.1\r\nHost: t\r\n\r\n");
    auto head = client.read_response(5s, true);
    client.send("GET /health HTTP/1.1\r\nHost: t\r\n\r\n");
    auto get = client.read_response();
    REQUIRE(head);
    REQUIRE(get);
    CHECK(head->status == 200);
    CHECK(head->header("content-length") == "3");
    // Nothing but the GET's bytes followed the HEAD's head.
    CHECK(get->body == "ok\n");
}

TEST_CASE("Expect: 100-continue gets an interim 100 before the body is sent", "[http]") {
    Portico portico(http_config);
    Client client(portico.port());
    client.send("POST /health HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n");
    auto interim = client.read_response();
    REQUIRE(interim);
    CHECK(interim->status == 100);
    client.send("hello");
    auto final_response = client.read_response();
    REQUIRE(final_response);
    CHECK(final_response->status == 200);
    // The body was consumed: the connection is still good for another request.
    client.send("GET /health HTTP/1.1\r\nHost: t\r\n\r\n");
    auto next = client.read_response();
    REQUIRE(next);
    CHECK(next->status == 200);
}

TEST_CASE("chunked request bodies are read to their end", "[http]") {
    Portico portico(http_config);
    Client client(portico.port());
    client.send("POST /health HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
                "5\r\nhello\r\n");
    std::this_thread::sleep_for(50ms);
    client.send("6;ext=1\r\n world\r\n0\r\nTrailer-Field: x\r\n\r\n"
                "GET /health HTTP/1.1\r\nHost: t\r\n\r\n");
    auto first = client.read_response();
    auto second = client.read_response();
    REQUIRE(first);
    REQUIRE(second);
    CHECK(first->status == 200);
    CHECK(second->status == 200);
    CHECK(second->body == "ok\n");
}

TEST_CASE("an absolute-form target is routed by its path", "[http]") {
    Portico portico(http_config);
    Client client(portico.port());
    client.send("GET http://example.com/health?x=1 HTTP/1.1\r\nHost: other\r\n\r\n");
    auto response = client.read_response();
    REQUIRE(response);
    CHECK(response->body == "ok\n");
}

TEST_CASE("an idle keep-alive connection is closed after keepalive_timeout", "[http]") {
    Portico portico(R"(
[server]
listen = ["{listen}"]
workers = 1
keepalive_timeout = "300ms"

[[location]]
prefix = "/"
respond = { status = 200, body = "root\n" }
)");
    Client client(portico.port());
    client.send("GET / HTTP/1.1\r\nHost: t\r\n\r\n");
    REQUIRE(client.read_response());
    auto start = std::chrono::steady_clock::now();
    CHECK(client.closed_by_server(3s));
    CHECK(std::chrono::steady_clock::now() - start < 2s);
}

TEST_CASE("keepalive_timeout = 0s turns keep-alive off", "[http]") {
    Portico portico(R"(
[server]
listen = ["{listen}"]
workers = 1
keepalive_timeout = "0s"

[[location]]
prefix = "/"
respond = { status = 204 }
)");
    Client client(portico.port());
    client.send("GET / HTTP/1.1\r\nHost: t\r\n\r\n");
    auto response = client.read_response();
    REQUIRE(response);
    CHECK(response->status == 204);
    CHECK(response->header("content-length").empty());
    CHECK(response->header("connection") == "close");
    CHECK(client.closed_by_server());
}
