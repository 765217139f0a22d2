// Body framing across the proxy: each side's framing is its own. An
// upstream's chunks are decoded and the data framed again for the client
// (chunks for HTTP/1.1, the close for HTTP/1.0), a client's chunked body is
// decoded and chunk-encoded again for the upstream, and neither side's chunk
// extensions or trailers cross. Limits count data, not framing.
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <thread>

#include "proxy_support.hpp"
#include "upstream_server.hpp"

using namespace portico::test;

namespace {

std::string hex_size(size_t size) {
    char digits[32];
    std::snprintf(digits, sizeof digits, "%zx", size);
    return digits;
}

// The bytes after the head, as they came, up to the end of a chunked body:
// the raw framing the client was sent.
std::string raw_chunked_body(ResponseReader& reader) {
    reader.read_until("\r\n0\r\n\r\n", 5s);
    std::string raw = reader.buffered();
    reader.discard();
    return raw;
}

// Decodes a whole chunked body (no trailers expected); nullopt when it is
// not well framed.
std::optional<std::string> decode_chunked(std::string_view raw) {
    std::string body;
    for (;;) {
        size_t line_end = raw.find("\r\n");
        if (line_end == std::string_view::npos || line_end == 0) return std::nullopt;
        std::string line(raw.substr(0, line_end));
        if (line.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
            return std::nullopt;  // an extension, or anything but a size
        size_t size = std::stoul(line, nullptr, 16);
        raw.remove_prefix(line_end + 2);
        if (size == 0) return raw == "\r\n" ? std::optional(body) : std::nullopt;
        if (raw.size() < size + 2 || raw.substr(size, 2) != "\r\n") return std::nullopt;
        body.append(raw.substr(0, size));
        raw.remove_prefix(size + 2);
    }
}

const std::string chunked_with_extras =
    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n"
    "Trailer: X-Checksum\r\n\r\n"
    "5;ext=1\r\nhello\r\n"
    "6;name=\"quoted value\"\r\n world\r\n"
    "0\r\nX-Checksum: abc123\r\n\r\n";

}  // namespace

TEST_CASE(
    "an upstream's chunks reach an HTTP/1.1 client re-chunked, without extensions or "
    "trailers",
    "[proxy][framing]") {
    UpstreamServer upstream([](const ReceivedRequest& request) {
        if (request.target == "/extras")
            return Reply::raw(chunked_with_extras, Reply::Then::keep_alive);
        return answer_ok(request);
    });
    Portico portico(proxy_config({upstream.address()}));
    Client client(portico.port());
    ResponseReader reader(client.fd());
    client.send(get_request("/extras"));
    auto head = reader.read_head();
    REQUIRE(head);
    INFO(head->head);
    CHECK(head->status == 200);
    CHECK(head->header("transfer-encoding") == "chunked");
    CHECK(head->headers.count("content-length") == 0);
    CHECK(head->headers.count("trailer") == 0);
    std::string raw = raw_chunked_body(reader);
    INFO(raw);
    CHECK(raw.find("ext=") == std::string::npos);
    CHECK(raw.find("quoted") == std::string::npos);
    CHECK(raw.find("X-Checksum") == std::string::npos);
    auto body = decode_chunked(raw);
    REQUIRE(body);
    CHECK(*body == "hello world");
    // The connection is in step for the next request.
    client.send(get_request("/next"));
    auto next = reader.read();
    REQUIRE(next);
    CHECK(next->body == "ok /next");
}

TEST_CASE("an HTTP/1.0 client gets a chunked upstream's data, ended by the close",
          "[proxy][framing]") {
    UpstreamServer upstream([](const ReceivedRequest&) {
        return Reply::raw(chunked_with_extras, Reply::Then::keep_alive);
    });
    Portico portico(proxy_config({upstream.address()}));
    Client client(portico.port());
    ResponseReader reader(client.fd());
    client.send("GET /old HTTP/1.0\r\nHost: front.example\r\n\r\n");
    auto head = reader.read_head();
    REQUIRE(head);
    INFO(head->head);
    CHECK(head->headers.count("transfer-encoding") == 0);
    CHECK(head->headers.count("content-length") == 0);
    auto rest = reader.read_until_close(5s);
    REQUIRE(rest);
    CHECK(*rest == "hello world");  // exactly the data: no sizes, no trailer
}

TEST_CASE("an upstream read holding many chunks reaches the client whole", "[proxy][framing]") {
    // More chunks in one read than the proxy keeps views for at once (16).
    std::string expected;
    std::string chunks;
    for (int i = 0; i < 100; ++i) {
        std::string piece = "piece " + std::to_string(i) + ";";
        expected += piece;
        chunks += hex_size(piece.size()) + "\r\n" + piece + "\r\n";
    }
    UpstreamServer upstream([&chunks](const ReceivedRequest&) {
        return Reply::raw(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks + "0\r\n\r\n",
            Reply::Then::keep_alive);
    });
    Portico portico(proxy_config({upstream.address()}));
    for (const char* version : {"HTTP/1.1", "HTTP/1.0"}) {
        INFO(version);
        auto response = proxy_fetch(portico.port(), std::string("GET /many ") + version +
                                                        "\r\nHost: front.example\r\n\r\n");
        REQUIRE(response);
        CHECK(response->body == expected);
    }
}

TEST_CASE("a large chunked response to a slow client arrives intact", "[proxy][framing]") {
    // 4 MiB in 1,024 chunks, read slowly: back-pressure, and chunk-size lines
    // that must outlive the writes that wait.
    std::vector<std::string> chunks;
    for (uint64_t i = 0; i < 1024; ++i) chunks.push_back(pattern_bytes(i * 4096, 4096));
    UpstreamServer upstream(
        [&chunks](const ReceivedRequest&) { return Reply::chunked(chunks, 0ms); });
    Portico portico(proxy_config({upstream.address()}));
    Client client(portico.port(), 4096);
    client.send(get_request("/big"));
    std::this_thread::sleep_for(500ms);  // not reading: the proxy waits on us
    ResponseReader reader(client.fd());
    auto response = reader.read(30s);
    REQUIRE(response);
    CHECK(reader.framing() == "chunked");
    REQUIRE(response->body.size() == 4u << 20);
    bool intact = response->body == pattern_bytes(0, 4u << 20);
    CHECK(intact);
}

TEST_CASE("a body ended by the upstream's close reaches an HTTP/1.1 client chunked",
          "[proxy][framing]") {
    // The client's connection need not end with the upstream's: its body is
    // framed by chunks, and a cut would show (no last chunk).
    UpstreamServer upstream([](const ReceivedRequest& request) {
        if (request.target != "/legacy") return answer_ok(request);
        return Reply::raw("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the close",
                          Reply::Then::close);
    });
    Portico portico(proxy_config({upstream.address()}));
    Client client(portico.port());
    ResponseReader reader(client.fd());
    client.send(get_request("/legacy"));
    auto response = reader.read();
    REQUIRE(response);
    CHECK(reader.framing() == "chunked");
    CHECK(response->body == "until the close");
    CHECK(response->header("connection") != "close");
    client.send(get_request("/next"));
    auto next = reader.read();
    REQUIRE(next);
    CHECK(next->body == "ok /next");
}

TEST_CASE(
    "a chunked request body reaches the upstream re-chunked, without extensions or "
    "trailers",
    "[proxy][framing]") {
    UpstreamServer upstream(
        [](const ReceivedRequest& request) { return Reply::text(200, "got " + request.body); });
    Portico portico(proxy_config({upstream.address()}));
    Client client(portico.port());
    ResponseReader reader(client.fd());
    client.send(
        "POST /upload HTTP/1.1\r\nHost: front.example\r\nTransfer-Encoding: chunked\r\n\r\n"
        "5;a=b\r\nhello\r\n");
    std::this_thread::sleep_for(100ms);  // the first chunk goes upstream on its own
    client.send("6\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n");
    auto response = reader.read();
    REQUIRE(response);
    CHECK(response->body == "got hello world");
    auto request = upstream.last_request();
    INFO(request.head << request.raw_body);
    CHECK(request.chunked);
    CHECK(request.header("transfer-encoding") == "chunked");
    CHECK(request.count("transfer-encoding") == 1);
    CHECK(request.count("content-length") == 0);
    CHECK(request.body == "hello world");
    CHECK(request.raw_body.find("a=b") == std::string::npos);
    CHECK(request.raw_body.find("X-Trailer") == std::string::npos);
    auto decoded = decode_chunked(request.raw_body);
    REQUIRE(decoded);
    CHECK(*decoded == "hello world");
}

TEST_CASE("request bodies keep the client's framing: a length stays a length", "[proxy][framing]") {
    UpstreamServer upstream(
        [](const ReceivedRequest& request) { return Reply::text(200, "got " + request.body); });
    Portico portico(proxy_config({upstream.address()}));
    SECTION("Content-Length") {
        auto response = proxy_fetch(
            portico.port(), "POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello");
        REQUIRE(response);
        CHECK(response->body == "got hello");
        auto request = upstream.last_request();
        CHECK(request.header("content-length") == "5");
        CHECK(request.count("content-length") == 1);
        CHECK_FALSE(request.chunked);
    }
    SECTION("an empty chunked body: only the last chunk") {
        auto response = proxy_fetch(
            portico.port(),
            "POST /a HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
        REQUIRE(response);
        CHECK(response->body == "got ");
        auto request = upstream.last_request();
        CHECK(request.chunked);
        CHECK(request.raw_body == "0\r\n\r\n");
    }
}

namespace {

// An upstream that reads one request slowly (64 KiB, then a pause), so the
// proxy's writes to it block and the client is held and resumed many times;
// it answers 200 "ok" once the chunked body's last chunk is in, and keeps
// what it read.
class SlowReadingUpstream {
public:
    SlowReadingUpstream() {
        listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t length = sizeof address;
        ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address);
        ::listen(listen_fd_, 4);
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length);
        port_ = ntohs(address.sin_port);
        thread_ = std::thread([this] { serve(); });
    }
    ~SlowReadingUpstream() {
        ::shutdown(listen_fd_, SHUT_RDWR);
        thread_.join();
        ::close(listen_fd_);
    }
    std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
    // The request as read, once served (the thread is done with it).
    std::string received() {
        thread_.join();
        thread_ = std::thread([] {});
        return received_;
    }

private:
    void serve() {
        int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) return;
        timeval timeout{10, 0};
        ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
        std::string block(64 * 1024, '\0');
        while (received_.size() < 5 ||
               received_.compare(received_.size() - 5, 5, "0\r\n\r\n") != 0) {
            std::this_thread::sleep_for(2ms);
            ssize_t n = ::recv(fd, block.data(), block.size(), 0);
            if (n <= 0) break;
            received_.append(block, 0, static_cast<size_t>(n));
        }
        std::string ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
        ::send(fd, ok.data(), ok.size(), MSG_NOSIGNAL);
        ::close(fd);
    }

    int listen_fd_ = -1;
    uint16_t port_ = 0;
    std::thread thread_;
    std::string received_;
};

}  // namespace

TEST_CASE("a 10 MiB chunked request body reaches a slow upstream intact", "[proxy][framing]") {
    // Faster than the upstream reads: the client is held and resumed, the
    // parser stopping inside the body and going on from the buffer.
    const size_t size = 10u << 20;
    SlowReadingUpstream upstream;
    Portico portico(proxy_config({upstream.address()}));
    std::string payload = random_bytes(size, 11);
    std::string framed;
    for (size_t at = 0; at < size; at += 50000) {
        size_t take = std::min<size_t>(50000, size - at);
        framed += hex_size(take) + ";n=" + std::to_string(at) + "\r\n" + payload.substr(at, take) +
                  "\r\n";
    }
    framed += "0\r\n\r\n";
    Client client(portico.port());
    std::thread sender([&] {
        client.send(
            "POST /upload HTTP/1.1\r\nHost: front.example\r\nTransfer-Encoding: chunked\r\n\r\n" +
            framed);
    });
    ResponseReader reader(client.fd());
    auto response = reader.read(60s);
    sender.join();
    REQUIRE(response);
    CHECK(response->body == "ok");
    std::string received = upstream.received();
    size_t head_end = received.find("\r\n\r\n");
    REQUIRE(head_end != std::string::npos);
    CHECK(contains_ignoring_case(received.substr(0, head_end), "transfer-encoding: chunked"));
    auto body = decode_chunked(std::string_view(received).substr(head_end + 4));
    REQUIRE(body);
    bool intact = *body == payload;
    CHECK(intact);
}

TEST_CASE("a chunked body that waits in the upstream queue goes up whole", "[proxy][framing]") {
    // The one connection allowed is busy: the body's first chunk waits with
    // the request, the client is held with the rest still in its buffer.
    UpstreamServer upstream([](const ReceivedRequest& request) {
        if (request.target == "/hold")
            return Reply().wait_release().send("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nheld");
        return Reply::text(200, "got " + request.body);
    });
    Portico portico(proxy_config({upstream.address()}, "max_connections = 1"));
    Client holder(portico.port());
    holder.send(get_request("/hold"));
    REQUIRE(upstream.wait_for_requests(1, 2s));
    Client client(portico.port());
    ResponseReader reader(client.fd());
    client.send(
        "POST /queued HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
        "3\r\none\r\n3\r\ntwo\r\n5\r\nthree\r\n0\r\n\r\n"
        "GET /after HTTP/1.1\r\nHost: h\r\n\r\n");
    std::this_thread::sleep_for(200ms);
    upstream.release_held();
    auto response = reader.read();
    REQUIRE(response);
    CHECK(response->body == "got onetwothree");
    auto after = reader.read();
    REQUIRE(after);
    CHECK(after->body == "got ");
}

TEST_CASE("max_body_bytes counts a chunked body's data, not its framing", "[proxy][framing]") {
    UpstreamServer upstream([](const ReceivedRequest& request) {
        return Reply::text(200, "got " + std::to_string(request.body.size()));
    });
    Portico portico(proxy_config({upstream.address()}, "", "", "max_body_bytes = 100"));
    SECTION("100 bytes of data in 1-byte chunks: 500 bytes framed, accepted") {
        std::string framed;
        for (int i = 0; i < 100; ++i) framed += "1\r\nx\r\n";
        auto response = proxy_fetch(
            portico.port(), "POST /a HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n" +
                                framed + "0\r\n\r\n");
        REQUIRE(response);
        CHECK(response->status == 200);
        CHECK(response->body == "got 100");
    }
    SECTION("101 bytes of data: 413") {
        Client client(portico.port());
        client.send(
            "POST /a HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
            "32\r\n" +
            std::string(50, 'x') + "\r\n");
        std::this_thread::sleep_for(100ms);  // the first 50 went upstream already
        client.send("33\r\n" + std::string(51, 'x') + "\r\n0\r\n\r\n");
        auto response = client.read_response();
        REQUIRE(response);
        CHECK(response->status == 413);
        CHECK(response->header("connection") == "close");
        // The upstream never got a whole request: its connection was closed.
        CHECK(UpstreamServer::wait_until([&] { return upstream.connections_closed_by_peer() == 1; },
                                         2s));
        CHECK(upstream.request_count() == 0);
    }
}

TEST_CASE("requests pipelined after a chunked body are answered in order", "[proxy][framing]") {
    UpstreamServer upstream([](const ReceivedRequest& request) {
        return Reply::text(200, request.method + " " + request.target + " [" + request.body + "]");
    });
    Portico portico(proxy_config({upstream.address()}));
    Client client(portico.port());
    ResponseReader reader(client.fd());
    client.send(
        "POST /one HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
        "3\r\nabc\r\n2;x=y\r\nde\r\n0\r\nT: 1\r\n\r\n"
        "GET /two HTTP/1.1\r\nHost: h\r\n\r\n"
        "POST /three HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nxyz"
        "POST /four HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nq\r\n0\r\n\r\n");
    for (std::string expected :
         {"POST /one [abcde]", "GET /two []", "POST /three [xyz]", "POST /four [q]"}) {
        auto response = reader.read();
        REQUIRE(response);
        CHECK(response->body == expected);
    }
    CHECK(upstream.request_count() == 4);
}

TEST_CASE("a chunked PUT retried on a fresh connection is sent again whole", "[proxy][framing]") {
    // The upstream takes the second request of a connection and closes
    // without a byte (the keep-alive race): the retry re-sends the body as
    // it was framed the first time.
    UpstreamServer upstream([](const ReceivedRequest& request) {
        if (request.index_on_connection >= 1) return Reply::raw("", Reply::Then::close);
        return Reply::text(200, "got " + request.body);
    });
    Portico portico(proxy_config({upstream.address()}));
    REQUIRE(proxy_fetch(portico.port(), get_request("/warm")));
    auto response = proxy_fetch(portico.port(),
                                "PUT /put HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                                "2\r\nhi\r\n3\r\n!!!\r\n0\r\n\r\n");
    REQUIRE(response);
    CHECK(response->status == 200);
    CHECK(response->body == "got hi!!!");
    CHECK(upstream.connections_accepted() == 2);
    auto request = upstream.last_request();
    CHECK(request.chunked);
    CHECK(request.body == "hi!!!");
}
