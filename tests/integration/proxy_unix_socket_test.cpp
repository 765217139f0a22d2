// Upstreams on Unix sockets (servers = ["unix:/path"]): proxied over
// HTTP/1.1 and HTTP/2, pooled and counted like TCP servers (label
// "unix:/path"), balanced, marked down, WebSocket through them, and a
// relative path taken from the config file's folder.
#include <catch2/catch.hpp>

#include <optional>
#include <string>

#include "http2_support.hpp"
#include "proxy_support.hpp"
#include "upstream_server.hpp"

using namespace portico::test;

// Its own namespace: in a unity build the test files share one translation
// unit, and their helpers (Answer, fake_path...) must not meet.
namespace proxy_unix_socket_test {

TEST_CASE("an upstream on a Unix socket is proxied to and pooled", "[proxy-rules]") {
    TempDir sockets;
    UpstreamServer upstream(UnixSocketPath{sockets.path() + "/app.sock"});
    uint16_t metrics_port = unused_port();
    Portico portico(
        with_metrics(proxy_config({upstream.address()}, "", "preserve_host = false\n", "") +
                         "[http2]\ncleartext = true\n",
                     metrics_port));

    Client client(portico.port());
    ResponseReader reader(client.fd());
    for (int i = 0; i < 3; ++i) {
        client.send(get_request("/r" + std::to_string(i) + "?q=1"));
        auto response = reader.read();
        REQUIRE(response);
        CHECK(response->status == 200);
        CHECK(response->body == "ok /r" + std::to_string(i) + "?q=1");
    }
    // Its Host is the upstream's name, not the socket path (nginx sends the same).
    CHECK(upstream.last_request().header("host") == "app");
    CHECK(upstream.last_request().header("x-forwarded-for") == "127.0.0.1");

    h2::Client h2client(portico.port());
    uint32_t id = h2client.get("/over-h2");
    REQUIRE(h2client.wait_stream(id));
    CHECK(h2client.result(id).status == 200);
    CHECK(h2client.result(id).body == "ok /over-h2");

    CHECK(upstream.request_count() == 4);
    CHECK(upstream.connections_accepted() == 1);
    // Labelled as written in servers, the path made absolute.
    std::string labels = "{upstream=\"app\",server=\"unix:" + sockets.path() + "/app.sock\"}";
    CHECK(metric(metrics_port, "portico_upstream_connections_opened_total" + labels) == 1);
    CHECK(metric(metrics_port, "portico_upstream_connections_reused_total" + labels) == 3);
}

TEST_CASE("Unix socket servers are balanced and marked down like TCP ones", "[proxy-rules]") {
    TempDir sockets;
    std::string missing = sockets.path() + "/missing.sock";
    std::optional<UpstreamServer> first(std::in_place, UnixSocketPath{sockets.path() + "/a.sock"});
    UpstreamServer second(UnixSocketPath{sockets.path() + "/b.sock"});
    uint16_t metrics_port = unused_port();
    Portico portico(
        with_metrics(proxy_config({first->address(), second.address(), "unix:" + missing},
                                  "max_fails = 1\nfail_timeout = \"30s\"\n"),
                     metrics_port));

    for (int i = 0; i < 6; ++i) {
        auto response = proxy_fetch(portico.port(), get_request("/" + std::to_string(i)));
        REQUIRE(response);
        CHECK(response->status == 200);
    }
    // Round robin over the two that listen; the missing one failed once,
    // was retried on the next, and is down for fail_timeout.
    CHECK(first->request_count() + second.request_count() == 6);
    CHECK(first->request_count() >= 2);
    CHECK(second.request_count() >= 2);
    CHECK(portico.wait_for_log("unix:" + missing + " marked down"));
    CHECK(upstream_errors(metrics_port, "unix:" + missing, "connect") == 1);

    // A server that goes away is a connect failure, not a hang.
    first.reset();
    for (int i = 0; i < 4; ++i) {
        auto response = proxy_fetch(portico.port(), get_request("/after"));
        REQUIRE(response);
        CHECK(response->status == 200);
    }
}

TEST_CASE("a WebSocket goes through a Unix socket upstream", "[proxy-rules]") {
    TempDir sockets;
    UpstreamServer upstream(UnixSocketPath{sockets.path() + "/ws.sock"},
                            [](const ReceivedRequest&) { return Reply::websocket(); });
    Portico portico(proxy_config({upstream.address()}));
    Client client(portico.port());
    ResponseReader reader(client.fd());
    client.send(
        "GET /ws HTTP/1.1\r\nHost: front.example\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n");
    auto head = reader.read_head();
    REQUIRE(head);
    CHECK(head->status == 101);
    client.send("through the socket");
    REQUIRE(reader.read_at_least(18, 2s));
    CHECK(reader.buffered() == "through the socket");
}

TEST_CASE("a relative unix: path is taken from the config file's folder", "[proxy-rules]") {
    // The socket appears after portico started: it is connected to per
    // request, never checked at load.
    Portico portico(proxy_config({"unix:run/app.sock"}));
    auto before = proxy_fetch(portico.port(), get_request("/early"));
    REQUIRE(before);
    CHECK(before->status == 502);
    portico.dir().write("run/.keep", "");
    UpstreamServer upstream(UnixSocketPath{portico.dir().path() + "/run/app.sock"});
    // Past the fail_timeout the first failure set (10s by default) the
    // server is tried again: with a single server, at once (nginx's).
    auto after = proxy_fetch(portico.port(), get_request("/late"));
    REQUIRE(after);
    CHECK(after->status == 200);
    CHECK(after->body == "ok /late");
}

}  // namespace proxy_unix_socket_test
