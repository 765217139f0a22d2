// Upstream failures as the client sees them: 502 for refused connections and
// malformed responses, 504 for silence past read_timeout, and an aborted
// (never complete-looking) response when the upstream dies mid-body.
#include <catch2/catch.hpp>

#include <thread>

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

// An app that is down fails every request: one log line a second for its
// server, then the count of those left out (it was one line per request,
// 75,000 in 14 s).
TEST_CASE("an upstream failing every request is logged once a second, with a count", "[proxy]") {
    std::string closed = "127.0.0.1:" + std::to_string(unused_port());
    Portico portico(proxy_config({closed}));
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 200; ++i) {
        auto response = proxy_fetch(portico.port(), get_request("/"));
        REQUIRE(response);
        REQUIRE(response->status == 502);
    }
    auto lines_about = [&](const std::string& text) {
        std::string log = portico.log();
        size_t count = 0;
        for (size_t at = log.find(text); at != std::string::npos; at = log.find(text, at + 1))
            ++count;
        return count;
    };
    const std::string failure_line = "upstream 'app' server " + closed + ": Connection refused";
    size_t seconds = static_cast<size_t>(ms_since(start) / 1000);
    INFO(portico.log());
    CHECK(lines_about(failure_line) >= 1);
    CHECK(lines_about(failure_line) <= seconds + 2);
    std::this_thread::sleep_for(1100ms);
    auto response = proxy_fetch(portico.port(), get_request("/"));
    REQUIRE(response);
    CHECK(response->status == 502);
    CHECK(portico.wait_for_log("more failure(s) of this server since the last line not logged"));
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

// nginx's proxy_read_timeout: the wait for the response starts once the
// request is sent in full. A slow upload's gaps are body_timeout's; with
// read_timeout running meanwhile any upload longer than it got a 504.
TEST_CASE("read_timeout starts once the request body is sent: a slow upload is not a 504",
          "[proxy]") {
    const std::string body = "0123456789abcdef";
    auto send_slowly = [&](Client& client) {
        client.send("POST /upload HTTP/1.1\r\nHost: front.example\r\nContent-Length: 16\r\n\r\n");
        for (char byte : body) {
            std::this_thread::sleep_for(100ms);  // 1.6 s in all, past read_timeout
            client.send(std::string(1, byte));
        }
    };
    SECTION("the upstream answers once the body is in") {
        UpstreamServer upstream(
            [](const ReceivedRequest& request) { return Reply::text(200, "got " + request.body); });
        Portico portico(proxy_config({upstream.address()}, "read_timeout = \"800ms\""));
        Client client(portico.port());
        send_slowly(client);
        auto response = client.read_response();
        REQUIRE(response);
        CHECK(response->status == 200);
        CHECK(response->body == "got " + body);
    }
    SECTION("a silent upstream still gets read_timeout, counted from the body's last byte") {
        UpstreamServer upstream([](const ReceivedRequest&) { return Reply::silence(); });
        Portico portico(proxy_config({upstream.address()}, "read_timeout = \"800ms\""));
        Client client(portico.port());
        send_slowly(client);
        auto sent = std::chrono::steady_clock::now();
        auto response = client.read_response();
        REQUIRE(response);
        CHECK(response->status == 504);
        CHECK(ms_since(sent) >= 700);
    }
}

// An upstream head that the proxy can read (its buffer is 64 KiB) but that
// does not fit the client's head block (16 KiB): a 502 with a body, as over
// HTTP/2, never an empty reply.
TEST_CASE("an upstream response head larger than the client's head block is a 502 with a body",
          "[proxy]") {
    std::string head = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n";
    for (int i = 0; i < 30; ++i)
        head += "X-Big-" + std::to_string(i) + ": " + std::string(1000, 'v') + "\r\n";
    UpstreamServer upstream([&](const ReceivedRequest& request) {
        if (request.target == "/big-head")
            return Reply::raw(head + "\r\nok", Reply::Then::keep_alive);
        return answer_ok(request);
    });
    Portico portico(proxy_config({upstream.address()}));
    for (int i = 0; i < 2; ++i) {
        Client client(portico.port());
        client.send(get_request("/big-head"));
        auto response = client.read_response();
        REQUIRE(response);
        CHECK(response->status == 502);
        CHECK_FALSE(response->body.empty());
        CHECK(response->header("connection") == "close");
        CHECK(client.closed_by_server());
    }
    CHECK(contains(portico.log(), "response head for /big-head exceeds"));
    auto next = proxy_fetch(portico.port(), get_request("/"));
    REQUIRE(next);
    CHECK(next->status == 200);
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
