// Every way a request can end is counted exactly once: N requests give N in
// portico_requests_total for their location (or "-") and code, N in that
// location's request histogram, and N access log lines. Each test case is a
// path that once counted twice or not at all.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

#include "metrics_support.hpp"
#include "proxy_support.hpp"
#include "upstream_server.hpp"

using namespace portico::test;

namespace {

constexpr int n = 3;

// `config` with the metrics listener and an access log in `dir`.
std::string counted(const std::string& config, const TempDir& dir) {
    return config + "\n[metrics]\nlisten = \"127.0.0.1:0\"\n\n[log]\naccess = \"" + dir.path() +
           "/access.log\"\n";
}

// Access log lines of `location` with `status`.
int access_lines(const TempDir& dir, const std::string& location, int status) {
    std::ifstream in(dir.path() + "/access.log");
    int count = 0;
    for (std::string line; std::getline(in, line);)
        if (line.find("\" " + std::to_string(status) + " ") != std::string::npos &&
            line.find(" loc=\"" + location + "\"") != std::string::npos)
            ++count;
    return count;
}

// Every portico_requests_total sample of `location`, whatever its code.
double requests_in(const std::string& text, const std::string& location) {
    std::string prefix = "portico_requests_total{location=\"" + location + "\",";
    double total = 0;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);)
        if (line.rfind(prefix, 0) == 0) total += std::stod(line.substr(line.rfind(' ') + 1));
    return total;
}

struct Counted {
    int code;
    int count;
};

// These requests in `location`, and none other there: in the counter, the
// request histogram and the access log.
void expect_counted(const Portico& portico, const TempDir& dir, const std::string& location,
                    const std::vector<Counted>& expected) {
    uint16_t port = metrics_port(portico);
    int total = 0;
    for (const auto& [code, count] : expected) {
        std::string series = "portico_requests_total{location=\"" + location + "\",code=\"" +
                             std::to_string(code) + "\"}";
        INFO(series);
        CHECK(sample(scrape_when(port, series, count), series) == count);
        total += count;
    }
    std::string text = scrape(port);
    INFO("location " << location);
    CHECK(requests_in(text, location) == total);
    CHECK(sample(text, "portico_request_duration_seconds_count{location=\"" + location + "\"}") ==
          total);
    // Lines are written at least once a second: wait for them, then for a
    // line too many.
    for (const Counted& each : expected) {
        INFO("access log lines with " << each.code);
        CHECK(UpstreamServer::wait_until(
            [&] { return access_lines(dir, location, each.code) >= each.count; }, 5s));
    }
    std::this_thread::sleep_for(1200ms);
    for (const auto& [code, count] : expected) {
        INFO("access log lines with " << code);
        CHECK(access_lines(dir, location, code) == count);
    }
}

// `count` requests, each answered `status`, each on a connection of its own.
void send_each(uint16_t port, const std::string& request, int status, int count = n) {
    for (int i = 0; i < count; ++i) {
        auto response = proxy_fetch(port, request);
        REQUIRE(response);
        CHECK(response->status == status);
    }
}

// `count` clients send `request` at once, and each is answered `status`.
void send_together(uint16_t port, const std::string& request, int status, int count = n) {
    std::vector<std::unique_ptr<Client>> clients;
    for (int i = 0; i < count; ++i) {
        clients.push_back(std::make_unique<Client>(port));
        clients.back()->send(request);
    }
    for (auto& client : clients) {
        ResponseReader reader(client->fd());
        auto response = reader.read(5s);
        REQUIRE(response);
        CHECK(response->status == status);
    }
}

}  // namespace

TEST_CASE("a refused upstream connection: each 502 is counted once", "[metrics][endings]") {
    TempDir dir;
    Portico portico(counted(proxy_config({"127.0.0.1:" + std::to_string(unused_port())}), dir));
    SECTION("one connection per request") {
        send_each(portico.port(), get_request("/"), 502);
    }
    SECTION("every request on one kept-alive connection") {
        Client client(portico.port());
        ResponseReader reader(client.fd());
        for (int i = 0; i < n; ++i) {
            client.send(get_request("/"));
            auto response = reader.read();
            REQUIRE(response);
            CHECK(response->status == 502);
        }
    }
    expect_counted(portico, dir, "/", {{502, n}});
}

TEST_CASE("every server down (two, both refusing): each 502 is counted once",
          "[metrics][endings]") {
    TempDir dir;
    Portico portico(counted(proxy_config({"127.0.0.1:" + std::to_string(unused_port()),
                                          "127.0.0.1:" + std::to_string(unused_port())}),
                            dir));
    // The first tries both; the next find both marked down.
    send_each(portico.port(), get_request("/"), 502);
    expect_counted(portico, dir, "/", {{502, n}});
}

TEST_CASE("connect_timeout and read_timeout: each 504 is counted once", "[metrics][endings]") {
    FullListener unanswering;
    UpstreamServer silent([](const ReceivedRequest&) { return Reply::silence(); });
    std::string server;
    SECTION("the connect") {
        server = "127.0.0.1:" + std::to_string(unanswering.port());
    }
    SECTION("the response") {
        server = silent.address();
    }
    TempDir dir;
    // max_fails = 0: each request tries the one server again.
    Portico portico(counted(
        proxy_config({server},
                     "max_fails = 0\nconnect_timeout = \"300ms\"\nread_timeout = \"300ms\""),
        dir));
    send_each(portico.port(), get_request("/"), 504);
    expect_counted(portico, dir, "/", {{504, n}});
}

TEST_CASE("no location, a bad head, a head too large: counted under \"-\"", "[metrics][endings]") {
    TempDir dir;
    Portico portico(counted(R"(
[server]
listen = ["{listen}"]
workers = 1
max_header_bytes = "1KiB"

[[location]]
exact = "/only"
respond = { status = 200, body = "ok\n" }
)",
                            dir));
    send_each(portico.port(), get_request("/nothing"), 404);
    send_each(portico.port(), "GET / HTTP/1.1\r\nHost : t\r\n\r\n", 400);
    send_each(portico.port(), get_request("/%zz"), 400);
    send_each(portico.port(), get_request("/only", "X-Big: " + std::string(2000, 'b') + "\r\n"),
              431);
    expect_counted(portico, dir, "-", {{404, n}, {400, 2 * n}, {431, n}});
}

TEST_CASE("a head or a body too slow: each 408 counted once under \"-\"", "[metrics][endings]") {
    UpstreamServer upstream;
    TempDir dir;
    Portico portico(counted(proxy_config({upstream.address()}, "", "",
                                         "header_timeout = \"300ms\"\nbody_timeout = \"300ms\""),
                            dir));
    SECTION("the head") {
        send_together(portico.port(), "GET / HTTP/1.1\r\nHost: front.exa", 408);
    }
    SECTION("the body, on its way upstream") {
        send_together(portico.port(),
                      "POST / HTTP/1.1\r\nHost: front.example\r\nContent-Length: 10\r\n\r\nabc",
                      408);
    }
    expect_counted(portico, dir, "-", {{408, n}});
    CHECK(requests_in(scrape(metrics_port(portico)), "/") == 0);
}

TEST_CASE("a body over max_body_bytes: each 413 counted once under \"-\"", "[metrics][endings]") {
    UpstreamServer upstream;
    TempDir dir;
    Portico portico(
        counted(proxy_config({upstream.address()}, "", "", "max_body_bytes = 100"), dir));
    SECTION("said by Content-Length") {
        send_each(portico.port(),
                  "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 101\r\n\r\n", 413);
    }
    SECTION("found in a chunked body") {
        send_each(portico.port(),
                  "POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n65\r\n" +
                      std::string(101, 'x') + "\r\n",
                  413);
    }
    expect_counted(portico, dir, "-", {{413, n}});
    CHECK(requests_in(scrape(metrics_port(portico)), "/") == 0);
}

TEST_CASE("waiting past connect_timeout in the queue: each 503 counted once, and in the queue's "
          "counters", "[metrics][endings]") {
    // "/hold" keeps the one connection allowed busy until released.
    UpstreamServer upstream([](const ReceivedRequest& request) {
        if (request.target != "/hold") return answer_ok(request);
        return Reply().wait_release().send("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nheld");
    });
    TempDir dir;
    Portico portico(counted(
        proxy_config({upstream.address()}, "max_connections = 1\nconnect_timeout = \"3s\""), dir));
    uint16_t metrics = metrics_port(portico);
    Client holder(portico.port());
    holder.send(get_request("/hold"));
    REQUIRE(upstream.wait_for_requests(1, 2s));

    std::vector<std::unique_ptr<Client>> waiting;
    for (int i = 0; i < n; ++i) {
        waiting.push_back(std::make_unique<Client>(portico.port()));
        waiting.back()->send(get_request("/waits"));
    }
    const std::string queued = "portico_upstream_queued{upstream=\"app\"}";
    CHECK(sample(scrape_when(metrics, queued, n), queued) == n);
    for (auto& client : waiting) {
        ResponseReader reader(client->fd());
        auto response = reader.read(6s);
        REQUIRE(response);
        CHECK(response->status == 503);
    }
    const std::string timeouts = "portico_upstream_queue_timeouts_total{upstream=\"app\"}";
    std::string text = scrape_when(metrics, timeouts, n);
    CHECK(sample(text, timeouts) == n);
    CHECK(sample(text, queued) == 0);

    upstream.release_held();
    ResponseReader reader(holder.fd());
    auto held = reader.read();
    REQUIRE(held);
    CHECK(held->status == 200);
    expect_counted(portico, dir, "/", {{503, n}, {200, 1}});
}

namespace {

// An upstream whose "/slow" sends a head and part of the body, then waits
// for release_held(); "/silent" never answers.
Reply slow_or_silent(const ReceivedRequest& request) {
    if (request.target == "/silent") return Reply::silence();
    return Reply()
        .send("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + pattern_bytes(0, 1000))
        .wait_release()
        .send(pattern_bytes(1000, 99000));
}

}  // namespace

TEST_CASE("a client gone before its response was out: each 499 counted once",
          "[metrics][endings]") {
    UpstreamServer upstream(slow_or_silent);
    TempDir dir;
    // Far more than the socket buffers hold: the client leaves mid-file.
    dir.write("www/files/big.bin", std::string(16 << 20, 'b'));
    Portico portico(counted(R"(
[server]
listen = ["{listen}"]
workers = 1

[upstream.app]
servers = [")" + upstream.address() + R"("]

[[location]]
prefix = "/files/"
root = ")" + dir.path() + R"(/www"

[[location]]
prefix = "/"
proxy = "app"
)",
                            dir));
    std::string location = "/";
    SECTION("proxied, mid-body") {
        for (int i = 0; i < n; ++i) {
            Client client(portico.port());
            client.send(get_request("/slow"));
            ResponseReader reader(client.fd());
            auto head = reader.read_head();
            REQUIRE(head);
            CHECK(head->status == 200);
        }
    }
    SECTION("proxied, while the upstream is silent") {
        for (int i = 0; i < n; ++i) {
            Client client(portico.port());
            client.send(get_request("/silent"));
            REQUIRE(upstream.wait_for_requests(static_cast<size_t>(i) + 1, 2s));
        }
    }
    SECTION("a file, mid-sendfile") {
        location = "/files/";
        for (int i = 0; i < n; ++i) {
            Client client(portico.port(), 8192);
            client.send(get_request("/files/big.bin"));
            ResponseReader reader(client.fd());
            auto head = reader.read_head();
            REQUIRE(head);
            CHECK(head->status == 200);
        }
    }
    expect_counted(portico, dir, location, {{499, n}});
    upstream.release_held();
}

TEST_CASE("an upstream gone mid-body: the status sent, each counted once", "[metrics][endings]") {
    UpstreamServer upstream([](const ReceivedRequest&) {
        return Reply::raw("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" +
                          pattern_bytes(0, 30000));
    });
    TempDir dir;
    // max_fails = 0: each failure leaves the one server in use.
    Portico portico(counted(proxy_config({upstream.address()}, "max_fails = 0"), dir));
    for (int i = 0; i < n; ++i) {
        Client client(portico.port());
        client.send(get_request("/"));
        ResponseReader reader(client.fd());
        auto head = reader.read_head();
        REQUIRE(head);
        CHECK(head->status == 200);
        auto rest = reader.read_until_close(5s);
        REQUIRE(rest);  // cut short: the client sees the close
        CHECK(rest->size() < 100000);
    }
    expect_counted(portico, dir, "/", {{200, n}});
    // The upstream did answer, if not all of it: its time is in.
    CHECK(sample(scrape(metrics_port(portico)),
                 "portico_upstream_duration_seconds_count{location=\"/\"}") == n);
}

TEST_CASE("WebSocket sessions: one 101 each, whichever side closes", "[metrics][endings]") {
    UpstreamServer upstream([](const ReceivedRequest& request) {
        Reply reply = Reply::websocket();
        if (request.target == "/bye") reply.send("bye").then_do(Reply::Then::close);
        return reply;
    });
    TempDir dir;
    Portico portico(counted(proxy_config({upstream.address()}), dir));
    auto handshake = [](const std::string& target) {
        return get_request(target,
                           "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                           "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                           "Sec-WebSocket-Version: 13\r\n");
    };
    SECTION("the client closes") {
        for (int i = 0; i < n; ++i) {
            Client client(portico.port());
            ResponseReader reader(client.fd());
            client.send(handshake("/echo"));
            auto head = reader.read_head();
            REQUIRE(head);
            CHECK(head->status == 101);
            client.send("ping");
            REQUIRE(reader.read_at_least(4, 2s));
        }
    }
    SECTION("the upstream closes") {
        for (int i = 0; i < n; ++i) {
            Client client(portico.port());
            ResponseReader reader(client.fd());
            client.send(handshake("/bye"));
            auto head = reader.read_head();
            REQUIRE(head);
            CHECK(head->status == 101);
            auto rest = reader.read_until_close(3s);
            REQUIRE(rest);
            CHECK(*rest == "bye");
        }
    }
    expect_counted(portico, dir, "/", {{101, n}});
}
