// Everything a location does works the same over TLS: static files (cached
// in memory, streamed from disk, ranges), proxying (X-Forwarded-Proto,
// request bodies, large responses), WebSocket tunnels, `respond`, keep-alive
// and pipelining on one TLS connection.
#include <catch2/catch.hpp>
#include <thread>

#include "static_site.hpp"
#include "tls_support.hpp"
#include "upstream_server.hpp"

using namespace portico::test;

namespace {

// /app/ proxied, /respond answered, the rest from the site.
std::string serving_config(const Certificates& certs, const Site& site,
                           const std::string& upstream) {
    return tls_config({certs.entry("a")}, R"(
[upstream.app]
servers = [")" + upstream + R"("]

[[location]]
prefix = "/app/"
proxy = "app"

[[location]]
exact = "/respond"
respond = { status = 201, body = "made\n" }

[[location]]
prefix = "/"
root = ")" + site.root() + R"("
)");
}

std::string get(const std::string& target, const std::string& extra = "") {
    return get_request(target, extra, "a.test");
}

// The answer of the upstream below: the body it was sent, or "ok TARGET".
Reply app(const ReceivedRequest& request) {
    if (request.target == "/app/big") return Reply::pattern(3u << 20);
    if (request.method == "POST")
        return Reply::text(
            200, "got " + std::to_string(request.body.size()) + " " + sha256_hex(request.body));
    if (contains_ignoring_case(request.header("upgrade"), "websocket")) {
        if (request.target == "/app/ws-hello") {
            Reply reply = Reply::websocket();
            reply.steps.front().bytes += "welcome";
            return reply;
        }
        return Reply::websocket();
    }
    return answer_ok(request);
}

}  // namespace

TEST_CASE("tls: static files over TLS: cached, streamed from disk (sha256), ranges, HEAD",
          "[tls][static]") {
    Certificates certs;
    Site site;
    UpstreamServer upstream(app);
    // Sizes around the 16 KiB of the memory cache and of a TLS record.
    const std::vector<std::pair<std::string, std::string>> files = {
        {"small.txt", "a small file, kept in memory\n"},
        {"record.bin", random_bytes(16 * 1024, 1)},
        {"over.bin", random_bytes(16 * 1024 + 1, 2)},
        {"medium.bin", random_bytes(100 * 1000 + 7, 3)},
        {"large.bin", random_bytes((3u << 20) + 777, 4)},
    };
    for (const auto& [name, content] : files) site.write(name, content);
    Portico portico(serving_config(certs, site, upstream.address()));
    uint16_t port = tls_port(portico);

    // One connection for all of them: each response must end exactly where
    // the next begins.
    TlsClient client(port, sni_a());
    REQUIRE(client.handshake());
    ResponseReader reader(client);
    for (int round = 0; round < 2; ++round) {
        for (const auto& [name, content] : files) {
            INFO(name << " round " << round);
            REQUIRE(client.send(get("/" + name)));
            auto response = reader.read(10s);
            REQUIRE(response);
            CHECK(response->status == 200);
            CHECK(response->header("content-length") == std::to_string(content.size()));
            CHECK(response->body.size() == content.size());
            CHECK(sha256_hex(response->body) == sha256_hex(content));
        }
    }
    const std::string& large = files.back().second;
    struct RangeCase {
        std::string range;
        std::string content_range;
        std::string body;
    };
    const std::vector<RangeCase> ranges = {
        {"bytes=0-9", "bytes 0-9/" + std::to_string(large.size()), large.substr(0, 10)},
        {"bytes=1000000-2000000", "bytes 1000000-2000000/" + std::to_string(large.size()),
         large.substr(1000000, 1000001)},
        {"bytes=-777",
         "bytes " + std::to_string(large.size() - 777) + "-" + std::to_string(large.size() - 1) +
             "/" + std::to_string(large.size()),
         large.substr(large.size() - 777)},
    };
    for (const RangeCase& c : ranges) {
        INFO("Range: " << c.range);
        REQUIRE(client.send(get("/large.bin", "Range: " + c.range + "\r\n")));
        auto response = reader.read(10s);
        REQUIRE(response);
        CHECK(response->status == 206);
        CHECK(response->header("content-range") == c.content_range);
        CHECK(sha256_hex(response->body) == sha256_hex(c.body));
    }
    REQUIRE(client.send("HEAD /large.bin HTTP/1.1\r\nHost: a.test\r\n\r\n"));
    auto head = reader.read(5s, true);
    REQUIRE(head);
    CHECK(head->status == 200);
    CHECK(head->header("content-length") == std::to_string(large.size()));
    // Nothing follows a HEAD's headers: the next response is intact.
    REQUIRE(client.send(get("/small.txt")));
    auto after = reader.read();
    REQUIRE(after);
    CHECK(after->body == files.front().second);
    CHECK(upstream.request_count() == 0);
}

TEST_CASE("tls: proxied over TLS: the upstream sees X-Forwarded-Proto https, cleartext says http",
          "[tls][proxy]") {
    Certificates certs;
    Site site;
    UpstreamServer upstream(app);
    Portico portico(serving_config(certs, site, upstream.address()));
    uint16_t port = tls_port(portico);

    auto secure = tls_fetch(port, get("/app/hello?x=1"), sni_a());
    REQUIRE(secure);
    CHECK(secure->status == 200);
    CHECK(secure->body == "ok /app/hello?x=1");
    ReceivedRequest seen = upstream.last_request();
    CHECK(seen.header("x-forwarded-proto") == "https");
    CHECK(seen.count("x-forwarded-proto") == 1);
    CHECK(seen.header("host") == "a.test");

    auto plain = proxy_fetch(portico.port(), get_request("/app/hello"));
    REQUIRE(plain);
    CHECK(plain->body == "ok /app/hello");
    CHECK(upstream.last_request().header("x-forwarded-proto") == "http");

    // A client's own X-Forwarded-Proto is not believed.
    auto spoofed =
        proxy_fetch(portico.port(), get_request("/app/spoof", "X-Forwarded-Proto: https\r\n"));
    REQUIRE(spoofed);
    CHECK(upstream.last_request().header("x-forwarded-proto") == "http");
    CHECK(upstream.last_request().count("x-forwarded-proto") == 1);

    // A large upstream body, every byte in place.
    auto big = tls_fetch(port, get("/app/big"), sni_a(), 10s);
    REQUIRE(big);
    CHECK(big->status == 200);
    CHECK(big->body.size() == 3u << 20);
    CHECK(big->body == pattern_bytes(0, 3u << 20));
}

TEST_CASE("tls: request bodies POSTed over TLS reach the upstream whole", "[tls][proxy]") {
    Certificates certs;
    Site site;
    UpstreamServer upstream(app);
    Portico portico(serving_config(certs, site, upstream.address()));
    uint16_t port = tls_port(portico);

    TlsClient client(port, sni_a());
    REQUIRE(client.handshake());
    ResponseReader reader(client);
    const std::string body = random_bytes(1 << 20, 5);
    REQUIRE(client.send("POST /app/upload HTTP/1.1\r\nHost: a.test\r\nContent-Length: " +
                        std::to_string(body.size()) + "\r\n\r\n" + body));
    auto response = reader.read(10s);
    REQUIRE(response);
    CHECK(response->status == 200);
    CHECK(response->body == "got " + std::to_string(body.size()) + " " + sha256_hex(body));
    CHECK(upstream.last_request().body == body);

    // Chunked, with Expect: 100-continue, on the same connection.
    REQUIRE(
        client.send("POST /app/chunks HTTP/1.1\r\nHost: a.test\r\n"
                    "Transfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n"));
    REQUIRE(reader.read_until("HTTP/1.1 100 Continue\r\n\r\n", 5s));
    reader.discard();
    REQUIRE(client.send("5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"));
    auto chunked = reader.read();
    REQUIRE(chunked);
    CHECK(chunked->body == "got 11 " + sha256_hex("hello world"));
    CHECK(upstream.last_request().body == "hello world");
}

TEST_CASE("tls: a WebSocket upgrade over TLS is tunnelled both ways", "[tls][proxy]") {
    Certificates certs;
    Site site;
    UpstreamServer upstream(app);
    Portico portico(serving_config(certs, site, upstream.address()));
    uint16_t port = tls_port(portico);
    const std::string handshake =
        "GET /app/ws HTTP/1.1\r\nHost: a.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
    {
        auto client = std::make_unique<TlsClient>(port, sni_a());
        REQUIRE(client->handshake());
        ResponseReader reader(*client);
        REQUIRE(client->send(handshake));
        auto head = reader.read_head();
        REQUIRE(head);
        CHECK(head->status == 101);
        CHECK(head->header("sec-websocket-accept") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
        CHECK(upstream.last_request().header("x-forwarded-proto") == "https");

        REQUIRE(client->send("hello tunnel"));
        REQUIRE(reader.read_at_least(12, 2s));
        CHECK(reader.buffered() == "hello tunnel");
        reader.discard();
        // More than the socket buffers hold, so the echo comes back while
        // it is still being sent.
        const std::string big = random_bytes(4 << 20, 6);
        REQUIRE(client->send(big, 20s));
        REQUIRE(reader.read_at_least(big.size(), 20s));
        CHECK(reader.buffered().size() == big.size());
        CHECK(sha256_hex(reader.buffered()) == sha256_hex(big));
        client->abort();
    }
    CHECK(
        UpstreamServer::wait_until([&] { return upstream.connections_closed_by_peer() == 1; }, 3s));

    // The upstream speaks first, in the write of its 101.
    TlsClient client(port, sni_a());
    REQUIRE(client.handshake());
    ResponseReader reader(client);
    std::string hello = handshake;
    hello.replace(4, 7, "/app/ws-hello");
    REQUIRE(client.send(hello));
    auto head = reader.read_head();
    REQUIRE(head);
    CHECK(head->status == 101);
    REQUIRE(reader.read_at_least(7, 2s));
    CHECK(reader.buffered() == "welcome");
    reader.discard();
    REQUIRE(client.send("and back"));
    REQUIRE(reader.read_at_least(8, 2s));
    CHECK(reader.buffered() == "and back");
}

TEST_CASE("tls: respond, keep-alive and pipelined requests on one TLS connection", "[tls]") {
    Certificates certs;
    Site site;
    site.write("page.html", "<p>page</p>\n");
    UpstreamServer upstream(app);
    Portico portico(serving_config(certs, site, upstream.address()));
    uint16_t port = tls_port(portico);

    TlsClient client(port, sni_a());
    REQUIRE(client.handshake());
    ResponseReader reader(client);
    // One after the other, kept alive.
    for (int i = 0; i < 3; ++i) {
        REQUIRE(client.send(get("/respond")));
        auto made = reader.read();
        REQUIRE(made);
        CHECK(made->status == 201);
        CHECK(made->body == "made\n");
        CHECK(made->header("connection") == "");
        REQUIRE(client.send(get("/page.html")));
        auto page = reader.read();
        REQUIRE(page);
        CHECK(page->body == "<p>page</p>\n");
        REQUIRE(client.send(get("/app/n" + std::to_string(i))));
        auto proxied = reader.read();
        REQUIRE(proxied);
        CHECK(proxied->body == "ok /app/n" + std::to_string(i));
    }
    // Pipelined: five requests in one TLS record, the answers in order.
    const std::string pipeline =
        get("/respond") + get("/page.html") + get("/app/p1") +
        "POST /app/post HTTP/1.1\r\nHost: a.test\r\nContent-Length: 4\r\n\r\nbody" +
        get("/nothing-here");
    REQUIRE(pipeline.size() < 16384);
    REQUIRE(client.send(pipeline));
    const std::vector<std::pair<int, std::string>> expected = {{201, "made\n"},
                                                               {200, "<p>page</p>\n"},
                                                               {200, "ok /app/p1"},
                                                               {200, "got 4 " + sha256_hex("body")},
                                                               {404, ""}};
    for (const auto& [status, body] : expected) {
        auto response = reader.read();
        REQUIRE(response);
        CHECK(response->status == status);
        if (!body.empty()) CHECK(response->body == body);
    }
    // More than the connection's input buffer in one go: several TLS
    // records, read ahead by OpenSSL beyond what the connection takes at
    // once, and every request still answered, in order.
    std::string many;
    for (int i = 0; i < 300; ++i)
        many += get("/app/m" + std::to_string(i), "X-Padding: " + std::string(100, 'p') + "\r\n");
    REQUIRE(many.size() > 40000);
    REQUIRE(client.send(many));
    for (int i = 0; i < 300; ++i) {
        auto response = reader.read();
        REQUIRE(response);
        REQUIRE(response->body == "ok /app/m" + std::to_string(i));
    }
    // Connection: close is honoured: the answer, then the end of the stream.
    REQUIRE(client.send(get("/respond", "Connection: close\r\n")));
    auto last = reader.read();
    REQUIRE(last);
    CHECK(last->header("connection") == "close");
    CHECK(reader.read_until_close(2s));
}

// The server holds the session ticket it writes as the handshake ends, so
// that it shares a write with the first response, and writes the
// close_notify with a response's last records when the connection closes
// after it. Neither may be lost: a client that sends nothing after its
// Finished still gets its ticket, and a Connection: close response, from
// the memory cache, from disk, from `respond` or from the upstream, ends
// with a close_notify.
TEST_CASE("tls: the ticket comes without a request, and Connection: close ends with close_notify",
          "[tls]") {
    Certificates certs;
    Site site;
    UpstreamServer upstream(app);
    site.write("small.txt", "a small file, kept in memory\n");
    site.write("medium.bin", random_bytes(100 * 1000 + 7, 3));
    Portico portico(serving_config(certs, site, upstream.address()));
    uint16_t port = tls_port(portico);

    {
        TlsOptions options = sni_a();
        options.min_version = options.max_version = TLS1_3_VERSION;
        TlsClient client(port, options);
        REQUIRE(client.handshake());
        // Nothing is sent: the read times out, having taken the ticket.
        char byte;
        CHECK(client.read_some(&byte, 1, 500) == -1);
        SSL_SESSION* session = client.take_session();
        REQUIRE(session != nullptr);
        CHECK(SSL_SESSION_has_ticket(session) == 1);
        SSL_SESSION_free(session);
        // The connection still serves.
        REQUIRE(client.send(get("/small.txt")));
        ResponseReader reader(client);
        auto response = reader.read();
        REQUIRE(response);
        CHECK(response->body == "a small file, kept in memory\n");
    }

    for (const std::string target : {"/small.txt", "/medium.bin", "/respond", "/app/x"}) {
        INFO(target);
        TlsClient client(port, sni_a());
        REQUIRE(client.handshake());
        REQUIRE(client.send(get(target, "Connection: close\r\n")));
        ResponseReader reader(client);
        auto response = reader.read();
        REQUIRE(response);
        CHECK((response->status == 200 || response->status == 201));
        CHECK(response->header("connection") == "close");
        char byte;
        CHECK(client.read_some(&byte, 1, 5000) == 0);
        CHECK(client.close_notify_received());
    }
}
