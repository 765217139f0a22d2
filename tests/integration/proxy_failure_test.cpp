// Upstream failures as the client sees them: 502 for refused connections and
// malformed responses, 504 for silence past read_timeout, and an aborted
// (never complete-looking) response when the upstream dies mid-body.
#include <catch2/catch.hpp>

#include "proxy_support.hpp"
#include "upstream_server.hpp"

using namespace portico::test;

TEST_CASE("a refused upstream connection is a 502", "[proxy]") {
    std::string closed = "127.0.0.1:" + std::to_string(unused_port());
    Portico portico(proxy_config({closed}));
    auto start = std::chrono::steady_clock::now();
    auto response = proxy_fetch(portico.port(), get_request("/"));
    REQUIRE(response);
    CHECK(response->status == 502);
    CHECK(ms_since(start) < 2000);
}

TEST_CASE("an upstream that does not accept within connect_timeout is a 504", "[proxy]") {
    FullListener unanswering;
    Portico portico(proxy_config({"127.0.0.1:" + std::to_string(unanswering.port())},
                                 "connect_timeout = \"300ms\""));
    auto start = std::chrono::steady_clock::now();
    auto response = proxy_fetch(portico.port(), get_request("/"));
    auto elapsed = ms_since(start);
    REQUIRE(response);
    CHECK(response->status == 504);
    CHECK(elapsed >= 250);
    CHECK(elapsed < 2500);
}

TEST_CASE("a malformed upstream response is a 502", "[proxy]") {
    std::string garbage;
    SECTION("not HTTP at all") {
        garbage = "this is not http\r\n\r\n";
    }
    SECTION("a broken Content-Length") {
        garbage = "HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\nabc";
    }
    SECTION("a broken status line") {
        garbage = "HTTP/1.1 2x0 OK\r\n\r\n";
    }
    SECTION("a status of two digits (found by fuzz_response_parser)") {
        garbage = "HTTP/1.1 20 OK\r\nContent-Length: 0\r\n\r\n";
    }
    SECTION("a folded header line (its log line once had no reason: fuzz_response_parser)") {
        garbage = "HTTP/1.1 200 OK\r\nX-Folded: a\r\n b\r\nContent-Length: 0\r\n\r\n";
    }
    UpstreamServer upstream([&garbage](const ReceivedRequest&) { return Reply::raw(garbage); });
    Portico portico(proxy_config({upstream.address()}));
    auto response = proxy_fetch(portico.port(), get_request("/"));
    REQUIRE(response);
    INFO(garbage);
    CHECK(response->status == 502);
    // The worker is still there, and its log line says why.
    auto next = proxy_fetch(portico.port(), get_request("/"));
    REQUIRE(next);
    CHECK(next->status == 502);
    CHECK(portico.log().find("was killed by signal") == std::string::npos);
    CHECK(portico.log().find("LOG ERROR") == std::string::npos);
}

TEST_CASE("a response framed both by Content-Length and chunked is never passed on ambiguous",
          "[proxy]") {
    // RFC 9112 6.3: either refuse it or let chunked win and drop the length;
    // never forward both (response smuggling into the client's connection).
    UpstreamServer upstream([](const ReceivedRequest&) {
        return Reply::raw(
            "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n"
            "\r\n5\r\nhello\r\n0\r\n\r\n");
    });
    Portico portico(proxy_config({upstream.address()}));
    auto response = proxy_fetch(portico.port(), get_request("/"));
    REQUIRE(response);
    INFO(response->head);
    if (response->status != 502) {
        CHECK(response->header("content-length").empty());
        CHECK(response->body == "hello");
    }
}

TEST_CASE("an upstream silent past read_timeout is a 504", "[proxy]") {
    UpstreamServer upstream([](const ReceivedRequest&) { return Reply::silence(); });
    Portico portico(proxy_config({upstream.address()}, "read_timeout = \"500ms\""));
    auto start = std::chrono::steady_clock::now();
    auto response = proxy_fetch(portico.port(), get_request("/"));
    auto elapsed = ms_since(start);
    REQUIRE(response);
    CHECK(response->status == 504);
    CHECK(elapsed >= 400);
    CHECK(elapsed < 3000);
    // That connection is closed, never pooled.
    CHECK(
        UpstreamServer::wait_until([&] { return upstream.connections_closed_by_peer() == 1; }, 2s));
}

TEST_CASE("an upstream that dies mid-body aborts the client's response", "[proxy]") {
    UpstreamServer upstream([](const ReceivedRequest& request) {
        if (request.target == "/length") {
            // 100 000 bytes announced, 30 000 sent, then the connection ends.
            Reply reply = Reply::raw("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" +
                                     pattern_bytes(0, 30000));
            return reply;
        }
        if (request.target == "/broken")
            return Reply::raw(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                "5\r\nhello\r\nzz\r\nabc\r\n0\r\n\r\n",
                Reply::Then::keep_alive);
        return Reply::raw("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n");
    });
    Portico portico(proxy_config({upstream.address()}));
    Client client(portico.port());
    ResponseReader reader(client.fd());

    SECTION("with a Content-Length: fewer bytes, then EOF") {
        client.send(get_request("/length"));
        auto head = reader.read_head();
        REQUIRE(head);
        CHECK(head->status == 200);
        CHECK(head->header("content-length") == "100000");
        auto rest = reader.read_until_close(5s);
        REQUIRE(rest);  // the proxy closed the client connection
        CHECK(rest->size() < 100000);
    }
    auto never_the_last_chunk = [&](const std::string& target) {
        client.send(get_request(target));
        auto head = reader.read_head();
        REQUIRE(head);
        INFO(head->head);
        // Framed so that an early end shows: a body delimited by the close
        // would make the cut response look complete.
        CHECK(contains_ignoring_case(head->header("transfer-encoding"), "chunked"));
        auto rest = reader.read_until_close(5s);
        REQUIRE(rest);
        INFO(*rest);
        CHECK(rest->find("hello") != std::string::npos);
        CHECK(rest->find("0\r\n\r\n") == std::string::npos);
    };
    SECTION("chunked: never the last chunk, then EOF") {
        never_the_last_chunk("/chunked");
    }
    SECTION("a malformed chunk: the same, too late for a 502") {
        never_the_last_chunk("/broken");
    }
}
