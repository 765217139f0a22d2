// The test upstream itself, driven directly with raw clients (no portico):
// when a [proxy] test fails, these say the fake origin is not the cause.
#include <catch2/catch.hpp>
#include <optional>
#include <thread>

#include "proxy_support.hpp"
#include "upstream_server.hpp"

using namespace portico::test;

TEST_CASE("upstream records requests in order and keeps the connection alive", "[upstream]") {
    UpstreamServer upstream;
    Client client(upstream.port());
    ResponseReader reader(client.fd());
    client.send(
        "POST /a?x=1 HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nX-Two: 1\r\nx-two: "
        "2\r\n\r\nhello");
    auto first = reader.read();
    client.send(get_request("/b"));
    auto second = reader.read();
    REQUIRE(first);
    REQUIRE(second);
    CHECK(first->body == "ok /a?x=1");
    CHECK(second->body == "ok /b");
    auto requests = upstream.requests();
    REQUIRE(requests.size() == 2);
    CHECK(requests[0].method == "POST");
    CHECK(requests[0].target == "/a?x=1");
    CHECK(requests[0].version == "HTTP/1.1");
    CHECK(requests[0].body == "hello");
    CHECK(requests[0].count("x-two") == 2);
    CHECK(requests[0].header("HOST") == "h");
    CHECK(requests[0].index_on_connection == 0);
    CHECK(requests[1].index_on_connection == 1);
    CHECK(requests[1].connection == 1);
    CHECK(upstream.connections_accepted() == 1);
}

TEST_CASE("upstream decodes chunked requests and streams chunked replies", "[upstream]") {
    UpstreamServer upstream([](const ReceivedRequest& request) {
        return Reply::chunked({request.body.substr(0, 3), request.body.substr(3)}, 200ms);
    });
    Client client(upstream.port());
    ResponseReader reader(client.fd());
    client.send(
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
        "4\r\nabcd\r\n3;ext=1\r\nefg\r\n0\r\nX-Trailer: t\r\n\r\n");
    auto start = std::chrono::steady_clock::now();
    auto head = reader.read_head();
    REQUIRE(head);
    CHECK(reader.read_until("abc\r\n", 1s));
    CHECK(ms_since(start) < 150);
    auto body = reader.read_body(*head, 2s);
    CHECK(ms_since(start) >= 350);
    REQUIRE(body);
    CHECK(*body == "abcdefg");
    auto request = upstream.last_request();
    CHECK(request.chunked);
    CHECK(request.body == "abcdefg");
    CHECK(request.raw_body == "4\r\nabcd\r\n3;ext=1\r\nefg\r\n0\r\nX-Trailer: t\r\n\r\n");
}

TEST_CASE("upstream closes idle connections and sees peers go away", "[upstream]") {
    UpstreamServer upstream;
    upstream.set_idle_close(100ms);
    {
        Client client(upstream.port());
        client.send(get_request("/"));
        ResponseReader reader(client.fd());
        REQUIRE(reader.read());
        auto start = std::chrono::steady_clock::now();
        CHECK(reader.read_until_close(1s));
        CHECK(ms_since(start) < 400);
    }
    CHECK_FALSE(upstream.connections()[0].closed_by_peer);
    upstream.set_idle_close(0ms);
    upstream.set_behaviour([](const ReceivedRequest&) { return Reply::silence(); });
    {
        Client client(upstream.port());
        client.send(get_request("/hang"));
        REQUIRE(upstream.wait_for_requests(2, 2s));
    }
    CHECK(
        UpstreamServer::wait_until([&] { return upstream.connections_closed_by_peer() == 1; }, 1s));
}

TEST_CASE("upstream tunnels after a 101 and sends patterns and cut replies", "[upstream]") {
    UpstreamServer upstream([](const ReceivedRequest& request) {
        if (request.target == "/ws") return Reply::websocket();
        if (request.target == "/cut")
            return Reply::raw("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n12345");
        return Reply::pattern(1 << 20);
    });
    {
        Client client(upstream.port());
        ResponseReader reader(client.fd());
        client.send(get_request("/ws", "Upgrade: websocket\r\nConnection: Upgrade\r\n"));
        auto head = reader.read_head();
        REQUIRE(head);
        CHECK(head->status == 101);
        client.send("echo me");
        CHECK(reader.read_at_least(7, 1s));
        CHECK(reader.buffered() == "echo me");
    }
    {
        auto response = proxy_fetch(upstream.port(), get_request("/big"));
        REQUIRE(response);
        bool intact = response->body == pattern_bytes(0, 1 << 20);
        CHECK(intact);
    }
    {
        Client client(upstream.port());
        ResponseReader reader(client.fd());
        client.send(get_request("/cut"));
        CHECK_FALSE(reader.read());
        CHECK(reader.eof());
    }
}

TEST_CASE("upstream stops at once with connections hanging or blocked writing", "[upstream]") {
    std::optional<UpstreamServer> upstream(std::in_place, [](const ReceivedRequest& request) {
        return request.target == "/big" ? Reply::pattern(100u << 20) : Reply::silence();
    });
    Client hanging(upstream->port());
    hanging.send(get_request("/hang"));
    Client not_reading(upstream->port(), 4096);
    not_reading.send(get_request("/big"));
    REQUIRE(upstream->wait_for_requests(2, 2s));
    std::this_thread::sleep_for(100ms);
    auto start = std::chrono::steady_clock::now();
    upstream.reset();
    CHECK(ms_since(start) < 500);
}
