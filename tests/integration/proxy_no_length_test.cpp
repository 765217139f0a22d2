// Upstream responses with neither Content-Length nor chunking: a body ended
// by the upstream's close (RFC 9112 6.3 rule 8: complete, not a failure;
// Python's http.server and HTTP/1.0 apps answer so), a head cut by the close
// (still a failure), and a HEAD answered without a length (the JDK's
// HttpServer), which must not reach the client as Content-Length: 0.
#include <catch2/catch.hpp>

#include "proxy_support.hpp"
#include "upstream_server.hpp"

using namespace portico::test;

TEST_CASE("a body ended by the upstream's close is complete and counts no failure", "[proxy]") {
    std::string head;
    SECTION("HTTP/1.0") {
        head = "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n";
    }
    SECTION("HTTP/1.1 with Connection: close") {
        head = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n";
    }
    SECTION("HTTP/1.1 without Connection: close") {
        head = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n";
    }
    UpstreamServer upstream([&head](const ReceivedRequest& request) {
        return Reply::raw(head + "body of " + request.target, Reply::Then::close);
    });
    uint16_t metrics_port = unused_port();
    Portico portico(with_metrics(proxy_config({upstream.address()}), metrics_port));
    INFO(head);
    for (int i = 0; i < 21; ++i) {
        std::string target = "/r" + std::to_string(i);
        auto response = proxy_fetch(portico.port(), get_request(target));
        REQUIRE(response);
        INFO(portico.log());
        REQUIRE(response->status == 200);
        CHECK(response->body == "body of " + target);
    }
    for (const char* kind : {"connect", "timeout", "reset", "bad_response", "tls"}) {
        INFO(kind);
        CHECK(upstream_errors(metrics_port, upstream.address(), kind) == 0);
    }
    CHECK(portico.log().find("marked down") == std::string::npos);
}

TEST_CASE("an upstream that closes before the head is complete is still a 502", "[proxy]") {
    UpstreamServer upstream([](const ReceivedRequest&) {
        return Reply::raw("HTTP/1.1 200 OK\r\nContent-Type: te", Reply::Then::close);
    });
    uint16_t metrics_port = unused_port();
    Portico portico(with_metrics(proxy_config({upstream.address()}), metrics_port));
    auto response = proxy_fetch(portico.port(), get_request("/"));
    REQUIRE(response);
    CHECK(response->status == 502);
    CHECK(upstream_errors(metrics_port, upstream.address(), "reset") == 1);
}

TEST_CASE("a HEAD answered without a length reaches the client without one", "[proxy]") {
    // The GET would have a body of unknown length: telling the client 0
    // would be wrong, so it is told nothing.
    UpstreamServer upstream([](const ReceivedRequest& request) {
        if (request.method == "HEAD")
            return Reply::raw("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n",
                              Reply::Then::keep_alive);
        return answer_ok(request);
    });
    Portico portico(proxy_config({upstream.address()}));
    Client client(portico.port());
    ResponseReader reader(client.fd());
    for (const char* version : {"HTTP/1.1", "HTTP/1.0"}) {
        INFO(version);
        client.send(std::string("HEAD /thing ") + version +
                    "\r\nHost: front.example\r\nConnection: keep-alive\r\n\r\n");
        auto head = reader.read(5s, true);
        REQUIRE(head);
        INFO(head->head);
        CHECK(head->status == 200);
        CHECK(head->headers.count("content-length") == 0);
        CHECK(head->headers.count("transfer-encoding") == 0);
        CHECK(head->header("content-type") == "text/plain");
        // No body to delimit: the client connection stays open for the next.
        CHECK(head->header("connection") != "close");
    }
    client.send(get_request("/after"));
    auto after = reader.read();
    REQUIRE(after);
    CHECK(after->body == "ok /after");
}
