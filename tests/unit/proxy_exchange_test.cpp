// ProxyExchange's decisions, driven through a fake client exchange against a
// real upstream on loopback (a scripted server in a thread): when a pooled
// connection is used again, when a request that met a closed pooled
// connection is sent again on a fresh one, and what the client sees when the
// upstream fails. The same with the real binary: tests/integration/proxy_*.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "config/config.hpp"
#include "config/units.hpp"
#include "core/buffer_pool.hpp"
#include "core/io_poller.hpp"
#include "core/unique_fd.hpp"
#include "fake_exchange.hpp"
#include "proxy/proxy_exchange.hpp"
#include "proxy/upstream.hpp"
#include "test_worker.hpp"

using namespace portico;
using namespace std::chrono_literals;
using portico::test::FakeExchange;

namespace {

// What the scripted upstream does with the request'th request (0-based) on
// its connection'th connection (0-based): the bytes to answer, or "" to
// close without answering.
using Script = std::function<std::string(int connection, int request)>;

std::string ok_response(const std::string& body, bool keep_alive = true) {
    return "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) +
           (keep_alive ? "\r\n" : "\r\nConnection: close\r\n") + "\r\n" + body;
}

// A blocking server in its own thread, one connection at a time.
class ScriptedUpstream {
public:
    explicit ScriptedUpstream(Script script) : script_(std::move(script)) {
        listener_.reset(::socket(AF_INET, SOCK_STREAM, 0));
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        REQUIRE(::bind(listener_.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) ==
                0);
        REQUIRE(::listen(listener_.get(), 16) == 0);
        socklen_t length = sizeof address;
        ::getsockname(listener_.get(), reinterpret_cast<sockaddr*>(&address), &length);
        port_ = ntohs(address.sin_port);
        thread_ = std::thread([this] { serve(); });
    }
    ~ScriptedUpstream() {
        stop_ = true;
        ::shutdown(listener_.get(), SHUT_RDWR);
        thread_.join();
    }
    uint16_t port() const { return port_; }
    int connections() const { return connections_; }
    int requests() const { return requests_; }

private:
    void serve() {
        for (int connection = 0; !stop_; ++connection) {
            core::UniqueFd client(::accept(listener_.get(), nullptr, nullptr));
            if (!client) return;
            ++connections_;
            timeval timeout{2, 0};
            ::setsockopt(client.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
            std::string input;
            for (int request = 0;; ++request) {
                size_t head_end;
                while ((head_end = input.find("\r\n\r\n")) == std::string::npos) {
                    char buffer[4096];
                    ssize_t n = ::recv(client.get(), buffer, sizeof buffer, 0);
                    if (n <= 0) goto next_connection;
                    input.append(buffer, static_cast<size_t>(n));
                }
                size_t body = 0;
                if (size_t at = input.find("Content-Length: ");
                    at != std::string::npos && at < head_end)
                    body = std::stoul(input.substr(at + 16));
                while (input.size() < head_end + 4 + body) {
                    char buffer[4096];
                    ssize_t n = ::recv(client.get(), buffer, sizeof buffer, 0);
                    if (n <= 0) goto next_connection;
                    input.append(buffer, static_cast<size_t>(n));
                }
                input.erase(0, head_end + 4 + body);
                ++requests_;
                std::string answer = script_(connection, request);
                if (answer.empty()) break;  // closed without an answer
                ::send(client.get(), answer.data(), answer.size(), MSG_NOSIGNAL);
            }
        next_connection:;
        }
    }

    Script script_;
    core::UniqueFd listener_;
    uint16_t port_ = 0;
    std::thread thread_;
    std::atomic<bool> stop_{false};
    std::atomic<int> connections_{0};
    std::atomic<int> requests_{0};
};

// A worker's proxy pieces on a poller of their own: the upstream `app` at the
// scripted server, the buffer pools, and ProxyExchanges started on fakes.
class Proxy {
public:
    explicit Proxy(uint16_t port) {
        config::UpstreamConfig upstream;
        upstream.name = "app";
        upstream.servers.push_back(*config::parse_socket_address(
            "127.0.0.1:" + std::to_string(port), config::HostNames::refused));
        upstream.read_timeout = 2s;
        whole_.upstreams.push_back(upstream);
        worker_ = std::make_unique<test::TestWorker>(whole_);
        upstream_ = std::make_unique<proxy::Upstream>(worker_->poller(), whole_.upstreams[0], 0,
                                                      worker_->counters());
    }
    ~Proxy() {
        upstream_->close_idle();
        upstream_->close();
        worker_->finish();
    }

    void start(FakeExchange& client) {
        client.peer.v4.sin_family = AF_INET;
        client.peer.v4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        rules_.push_back(std::make_unique<proxy::UpstreamRequestRules>(client.location_config));
        (new proxy::ProxyExchange(client, *upstream_, *rules_.back(), buffers_, response_buffers_,
                                  worker_->poller()))
            ->start();
    }
    // Starts one proxied request, calls `then` (the client's body, say),
    // and runs the loop until its response is ended or aborted (5 s at most).
    void run(FakeExchange& client, const std::function<void()>& then = {}) {
        start(client);
        if (then) then();
        run_until([&] { return client.ended || client.aborted; });
    }
    void run_until(const std::function<bool()>& done) {
        auto deadline = std::chrono::steady_clock::now() + 5s;
        while (!done() && std::chrono::steady_clock::now() < deadline) worker_->poller().turn(10);
        worker_->poller().turn(0);  // what this turn released is freed
    }

private:
    config::Config whole_;
    std::unique_ptr<test::TestWorker> worker_;
    std::unique_ptr<proxy::Upstream> upstream_;
    core::BufferPool buffers_{16 * 1024};
    core::BufferPool response_buffers_{64 * 1024};
    std::vector<std::unique_ptr<proxy::UpstreamRequestRules>> rules_;  // one per client started
};

}  // namespace

TEST_CASE(
    "proxy exchange: a complete keep-alive exchange leaves its connection for the next request",
    "[proxy]") {
    ScriptedUpstream app(
        [](int, int request) { return ok_response("answer " + std::to_string(request)); });
    Proxy proxy(app.port());
    for (int i = 0; i < 3; ++i) {
        FakeExchange client("GET", "/item");
        proxy.run(client);
        REQUIRE(client.ended);
        CHECK(client.status == std::optional<int>(200));
        CHECK(client.body == "answer " + std::to_string(i));
    }
    CHECK(app.connections() == 1);
    CHECK(app.requests() == 3);
}

TEST_CASE("proxy exchange: Connection: close, or a client gone mid-response, leaves nothing pooled",
          "[proxy]") {
    SECTION("the upstream says close") {
        ScriptedUpstream app([](int, int) { return ok_response("bye", false); });
        Proxy proxy(app.port());
        for (int i = 0; i < 2; ++i) {
            FakeExchange client("GET", "/");
            proxy.run(client);
            CHECK(client.body == "bye");
        }
        CHECK(app.connections() == 2);
    }
    SECTION("the client left before the body was in") {
        ScriptedUpstream app([](int connection, int) {
            if (connection > 0) return ok_response("next");
            return std::string("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n") +
                   std::string(10, 'x');
        });
        Proxy proxy(app.port());
        FakeExchange leaving("GET", "/");
        proxy.start(leaving);
        proxy.run_until([&] { return leaving.body.size() == 10; });
        REQUIRE(leaving.status == std::optional<int>(200));
        CHECK_FALSE(leaving.ended);
        leaving.go_away();
        FakeExchange next("GET", "/");
        proxy.run(next);
        CHECK(next.body == "next");
        CHECK(app.connections() == 2);  // the cut response's connection was closed, not pooled
    }
}

TEST_CASE(
    "proxy exchange: a GET that meets a pooled connection closed under it is sent again on a new "
    "one, and a POST whose body went out is not",
    "[proxy]") {
    // A connection's first request is answered and kept alive; its next
    // request gets a close (the app's idle timeout firing as it came).
    auto script = [](int, int request) {
        return request == 0 ? ok_response("fresh") : std::string();
    };
    ScriptedUpstream app(script);
    Proxy proxy(app.port());
    FakeExchange first("GET", "/");
    proxy.run(first);
    REQUIRE(first.body == "fresh");
    SECTION("GET: retried, the client never sees the race") {
        FakeExchange second("GET", "/");
        proxy.run(second);
        CHECK(second.status == std::optional<int>(200));
        CHECK(second.body == "fresh");  // the new connection's first answer
        CHECK(app.connections() == 2);
    }
    SECTION("POST with its body sent: 502, never sent twice") {
        FakeExchange post("POST", "/orders");
        post.set_body_length(5);
        proxy.run(post, [&] {
            post.deliver_body("12345");
            post.complete_request();
        });
        CHECK(post.status == std::optional<int>(502));
        CHECK(app.connections() == 1);
        CHECK(app.requests() == 2);
    }
}
