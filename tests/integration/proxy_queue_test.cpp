// max_connections: past it, requests wait in a first-come first-served queue
// for a connection, at most connect_timeout, then 503.
#include <catch2/catch.hpp>
#include <thread>

#include "proxy_support.hpp"
#include "upstream_server.hpp"

using namespace portico::test;

namespace {

// "/hold" waits for release_held(); anything else is answered at once.
Reply hold_or_answer(const ReceivedRequest& request) {
    if (request.target != "/hold") return answer_ok(request);
    Reply reply;
    reply.wait_release();
    reply.send("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nheld");
    return reply;
}

// Sends /hold and waits until the upstream has it: the one connection allowed is busy.
std::unique_ptr<Client> hold_the_connection(const Portico& portico, const UpstreamServer& upstream) {
    auto holder = std::make_unique<Client>(portico.port());
    holder->send(get_request("/hold"));
    REQUIRE(upstream.wait_for_requests(1, 2s));
    return holder;
}

}  // namespace

TEST_CASE("past max_connections requests wait and are served in arrival order", "[proxy]") {
    UpstreamServer upstream(hold_or_answer);
    Portico portico(proxy_config({upstream.address()}, "max_connections = 1"));
    auto holder = hold_the_connection(portico, upstream);

    std::vector<std::unique_ptr<Client>> waiting;
    for (const char* target : {"/first", "/second", "/third"}) {
        waiting.push_back(std::make_unique<Client>(portico.port()));
        waiting.back()->send(get_request(target));
        std::this_thread::sleep_for(50ms);  // a definite arrival order
    }
    std::this_thread::sleep_for(200ms);
    CHECK(upstream.request_count() == 1);  // the others wait in portico
    CHECK(upstream.connections_accepted() == 1);

    upstream.release_held();
    ResponseReader holder_reader(holder->fd());
    auto held = holder_reader.read();
    REQUIRE(held);
    CHECK(held->body == "held");
    for (size_t i = 0; i < waiting.size(); ++i) {
        ResponseReader reader(waiting[i]->fd());
        auto response = reader.read();
        REQUIRE(response);
        CHECK(response->status == 200);
    }
    auto requests = upstream.requests();
    REQUIRE(requests.size() == 4);
    CHECK(requests[1].target == "/first");
    CHECK(requests[2].target == "/second");
    CHECK(requests[3].target == "/third");
    CHECK(upstream.connections_accepted() == 1);  // all on the one connection
}

TEST_CASE("a request that waits past connect_timeout gets a 503, and the next is served",
          "[proxy]") {
    UpstreamServer upstream(hold_or_answer);
    Portico portico(proxy_config({upstream.address()}, "max_connections = 1\nconnect_timeout = \"300ms\""));
    auto holder = hold_the_connection(portico, upstream);

    auto start = std::chrono::steady_clock::now();
    auto waited = proxy_fetch(portico.port(), get_request("/late"), 3s);
    REQUIRE(waited);
    CHECK(waited->status == 503);
    CHECK(ms_since(start) >= 250);
    CHECK(ms_since(start) < 2000);
    CHECK(portico.wait_for_log("max_connections (1)", 1, 2s));
    CHECK(upstream.request_count() == 1);  // /late never went upstream

    upstream.release_held();
    ResponseReader reader(holder->fd());
    auto held = reader.read();
    REQUIRE(held);
    CHECK(held->body == "held");
    auto next = proxy_fetch(portico.port(), get_request("/next"));
    REQUIRE(next);
    CHECK(next->status == 200);
    CHECK(next->body == "ok /next");
}

TEST_CASE("a client that leaves the queue is forgotten, and the queue goes on", "[proxy]") {
    UpstreamServer upstream(hold_or_answer);
    Portico portico(proxy_config({upstream.address()}, "max_connections = 1"));
    auto holder = hold_the_connection(portico, upstream);

    {
        Client leaver(portico.port());
        leaver.send(get_request("/gone"));
        std::this_thread::sleep_for(100ms);
    }  // closed while waiting
    Client stayer(portico.port());
    stayer.send(get_request("/stays"));
    std::this_thread::sleep_for(100ms);

    upstream.release_held();
    ResponseReader stayer_reader(stayer.fd());
    auto response = stayer_reader.read();
    REQUIRE(response);
    CHECK(response->status == 200);
    CHECK(response->body == "ok /stays");
    auto requests = upstream.requests();
    REQUIRE(requests.size() == 2);
    CHECK(requests[1].target == "/stays");  // /gone never went upstream
}

TEST_CASE("a body that arrived while its request waited is sent again on a retry", "[proxy]") {
    // /hold is answered on release, then its connection closed without a
    // word: pooled, it dies under the next request, which must be retried.
    UpstreamServer upstream([](const ReceivedRequest& request) {
        if (request.target == "/hold") {
            Reply reply;
            reply.wait_release();
            reply.send("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nheld");
            reply.then_do(Reply::Then::close);
            return reply;
        }
        return Reply::text(200, "got " + request.body);
    });
    Portico portico(proxy_config({upstream.address()}, "max_connections = 1"));
    auto holder = hold_the_connection(portico, upstream);

    Client putter(portico.port());
    putter.send("PUT /put HTTP/1.1\r\nHost: front.example\r\nContent-Length: 5\r\n\r\nhello");
    std::this_thread::sleep_for(200ms);  // queued, with its body
    upstream.release_held();
    ResponseReader holder_reader(holder->fd());
    auto held = holder_reader.read();
    REQUIRE(held);
    CHECK(held->body == "held");

    ResponseReader reader(putter.fd());
    auto response = reader.read(5s);
    REQUIRE(response);
    CHECK(response->status == 200);
    CHECK(response->body == "got hello");
}
