// Bad input on a TLS port, as an internet-facing port sees it all day: a
// plain HTTP request, garbage, a handshake that stops half-way, clients that
// leave mid-response or read slowly. Each is dealt with quietly (nothing
// logged above info) and the next client is served.
#include <catch2/catch.hpp>
#include <fstream>
#include <thread>

#include "static_site.hpp"
#include "tls_support.hpp"
#include "upstream_server.hpp"

using namespace portico::test;

namespace {

// handshake_timeout 1 s, header_timeout 10 s (the default), unless told
// otherwise: each of the timeout tests would fail if the other applied.
std::string tls_bad_input_config(const Certificates& certs, const Site& site, const std::string& upstream,
                   const std::string& tls_options = "handshake_timeout = \"1s\"\n",
                   const std::string& server_options = "workers = 1\n") {
    return tls_config({certs.entry("a")}, R"(
[upstream.app]
servers = [")" + upstream + R"("]

[[location]]
prefix = "/app/"
proxy = "app"

[[location]]
exact = "/"
respond = { status = 200, body = "fine\n" }

[[location]]
prefix = "/"
root = ")" + site.root() + R"("
)",
                      tls_options, server_options);
}

// Under AddressSanitizer a worker's RSS says little about its memory: freed
// blocks stay in ASan's quarantine (OpenSSL frees and takes a write buffer
// per record), so the RSS checks are for the other builds.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool rss_tells_memory = false;
#else
constexpr bool rss_tells_memory = true;
#endif

void expect_next_tls_client_served(uint16_t port) {
    auto response = tls_fetch(port, get_request("/", "", "a.test"), sni_a());
    REQUIRE(response);
    CHECK(response->status == 200);
    CHECK(response->body == "fine\n");
}

void expect_quiet_log(const Portico& portico) {
    std::vector<std::string> lines = log_lines_above_info(portico.log());
    for (const std::string& line : lines) UNSCOPED_INFO(line);
    CHECK(lines.empty());
}

}  // namespace

TEST_CASE("tls: a plain HTTP request on the TLS port gets a clear-text 400, then a close",
          "[tls][bad-input]") {
    Certificates certs;
    Site site;
    UpstreamServer upstream;
    Portico portico(tls_bad_input_config(certs, site, upstream.address()));
    uint16_t port = tls_port(portico);
    const std::vector<std::string> requests = {
        "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n",
        "HEAD /x HTTP/1.0\r\n\r\n",
        "POST /form HTTP/1.1\r\nHost: a.test\r\nContent-Length: 11\r\n\r\nhello world",
        "PUT /file HTTP/1.1\r\nHost: a.test\r\nContent-Length: 3\r\n\r\nabc",
    };
    for (const std::string& request : requests) {
        INFO(request.substr(0, request.find('\r')));
        Client client(port);
        client.send(request);
        auto answer = client.read_until_close(3s);
        REQUIRE(answer);
        CHECK(answer->rfind("HTTP/1.1 400 Bad Request\r\n", 0) == 0);
        CHECK(answer->find("Connection: close\r\n") != std::string::npos);
        CHECK(answer->find("\r\n\r\nThis port speaks HTTPS: use an https:// URL.\n") !=
              std::string::npos);
        expect_next_tls_client_served(port);
    }
    CHECK(upstream.request_count() == 0);
    expect_quiet_log(portico);
}

TEST_CASE("tls: garbage instead of a ClientHello is closed, and nobody else notices",
          "[tls][bad-input]") {
    Certificates certs;
    Site site;
    UpstreamServer upstream;
    Portico portico(tls_bad_input_config(certs, site, upstream.address()));
    uint16_t port = tls_port(portico);
    const std::string hello = client_hello(0x0303, {0xc02b, 0xc02f}, "a.test");
    const std::vector<std::pair<std::string, std::string>> inputs = {
        {"a handshake record of garbage", "\x16\x03\x01\x00\x10" + std::string(16, '\xee')},
        {"a handshake record header announcing more than comes",
         std::string("\x16\x03\x01\x40\x00", 5) + "short"},
        {"a ClientHello with its lengths wrong",
         hello.substr(0, 9) + "\xff\xff" + hello.substr(11)},
        {"an oversized record length",
         std::string("\x16\x03\x03\xff\xff", 5) + std::string(64, 'x')},
        {"binary noise", random_bytes(300, 7)},
        {"zeros", std::string(64, '\0')},
        {"an SSH greeting", "SSH-2.0-OpenSSH_9.2\r\n"},
        {"an HTTP method OpenSSL does not recognize", "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n"},
        {"an SSLv2-style hello",
         std::string("\x80\x2e\x01\x00\x02\x00\x15\x00\x00\x00\x10", 11) + std::string(37, '\x01')},
    };
    for (const auto& [what, bytes] : inputs) {
        INFO(what);
        Client client(port);
        client.send(bytes);
        auto start = std::chrono::steady_clock::now();
        auto answer = client.read_until_close(4s);
        REQUIRE(answer);
        CHECK(ms_since(start) < 3000);  // at the latest, handshake_timeout (1 s)
        // At most a TLS alert, never an HTTP answer.
        CHECK(answer->find("HTTP/") == std::string::npos);
        expect_next_tls_client_served(port);
    }
    expect_quiet_log(portico);
}

TEST_CASE("tls: a handshake that stops half-way is closed within handshake_timeout",
          "[tls][bad-input]") {
    Certificates certs;
    Site site;
    UpstreamServer upstream;
    Portico portico(tls_bad_input_config(certs, site, upstream.address()));
    uint16_t port = tls_port(portico);
    const std::string hello = client_hello(0x0303, {0xc02b, 0xc02f}, "a.test");
    const std::vector<std::pair<std::string, std::string>> stalls = {
        {"a truncated ClientHello, then silence", hello.substr(0, hello.size() / 2)},
        {"only the record header", hello.substr(0, 5)},
        // The server answers (ServerHello, certificate...) and waits for the
        // client's key exchange, which never comes.
        {"a whole TLS 1.2 ClientHello, then silence", hello},
    };
    for (const auto& [what, bytes] : stalls) {
        INFO(what);
        Client client(port);
        auto start = std::chrono::steady_clock::now();
        client.send(bytes);
        // Meanwhile others are served at once.
        auto others = std::chrono::steady_clock::now();
        for (int i = 0; i < 3; ++i) expect_next_tls_client_served(port);
        CHECK(ms_since(others) < 900);
        auto answer = client.read_until_close(5s);
        REQUIRE(answer);
        long long closed_after = ms_since(start);
        CHECK(closed_after >= 900);
        CHECK(closed_after < 3000);
        CHECK(answer->find("HTTP/") == std::string::npos);
    }
    expect_next_tls_client_served(port);
    expect_quiet_log(portico);
}

TEST_CASE("tls: after the handshake, header_timeout applies: a 408 over TLS, or a close",
          "[tls][bad-input]") {
    Certificates certs;
    Site site;
    UpstreamServer upstream;
    // handshake_timeout is the default 10 s here.
    Portico portico(
        tls_bad_input_config(certs, site, upstream.address(), "", "workers = 1\nheader_timeout = \"1s\"\n"));
    uint16_t port = tls_port(portico);
    {
        // Part of a head, then nothing: the 408 goes out through TLS.
        TlsClient client(port, sni_a());
        REQUIRE(client.handshake());
        auto start = std::chrono::steady_clock::now();
        REQUIRE(client.send("GET / HTTP/1.1\r\nHost: a.test\r\n"));
        ResponseReader reader(client);
        auto response = reader.read(4s);
        REQUIRE(response);
        CHECK(response->status == 408);
        CHECK(ms_since(start) >= 900);
        CHECK(ms_since(start) < 3000);
        CHECK(reader.read_until_close(2s));
    }
    {
        // A handshake and not a byte more: closed.
        TlsClient client(port, sni_a());
        REQUIRE(client.handshake());
        auto start = std::chrono::steady_clock::now();
        ResponseReader reader(client);
        auto rest = reader.read_until_close(4s);
        REQUIRE(rest);
        CHECK(rest->empty());
        CHECK(ms_since(start) >= 900);
        CHECK(ms_since(start) < 3000);
    }
    expect_next_tls_client_served(port);
    expect_quiet_log(portico);
}

TEST_CASE("tls: clients leaving mid-response (file, proxied stream) harm nobody",
          "[tls][bad-input]") {
    Certificates certs;
    Site site;
    site.write("big.bin", pattern_bytes(0, 32u << 20));
    UpstreamServer upstream([](const ReceivedRequest& request) {
        if (request.target == "/app/stream") return Reply::pattern(200u << 20);
        return answer_ok(request);
    });
    Portico portico(tls_bad_input_config(certs, site, upstream.address()));
    uint16_t port = tls_port(portico);
    auto workers = portico.worker_pids();
    REQUIRE(workers.size() == 1);

    for (bool reset : {true, false}) {
        INFO((reset ? "reset" : "plain close"));
        {
            TlsClient client(port, sni_a());
            REQUIRE(client.handshake());
            REQUIRE(client.send(get_request("/big.bin", "", "a.test")));
            ResponseReader reader(client);
            REQUIRE(reader.read_at_least(256 * 1024, 5s));
            if (reset) client.abort();
        }
        expect_next_tls_client_served(port);

        size_t closed_before = upstream.connections_closed_by_peer();
        {
            TlsClient client(port, sni_a());
            REQUIRE(client.handshake());
            REQUIRE(client.send(get_request("/app/stream", "", "a.test")));
            ResponseReader reader(client);
            REQUIRE(reader.read_at_least(256 * 1024, 5s));
            if (reset) client.abort();
        }
        // The upstream connection is closed, not pooled with a body half-read.
        CHECK(UpstreamServer::wait_until(
            [&] { return upstream.connections_closed_by_peer() == closed_before + 1; }, 3s));
        auto proxied = tls_fetch(port, get_request("/app/after", "", "a.test"), sni_a());
        REQUIRE(proxied);
        CHECK(proxied->body == "ok /app/after");
    }
    CHECK(portico.worker_pids() == workers);  // no crash, no restart
    expect_quiet_log(portico);
}

TEST_CASE("tls: a slow reader of a large file stalls nobody, and the worker's memory stays flat",
          "[tls][bad-input]") {
    Certificates certs;
    Site site;
    const uint64_t size = 48u << 20;
    site.write("big.bin", pattern_bytes(0, size));
    UpstreamServer upstream;
    Portico portico(tls_bad_input_config(certs, site, upstream.address()));
    uint16_t port = tls_port(portico);
    auto workers = portico.worker_pids();
    REQUIRE(workers.size() == 1);
    expect_next_tls_client_served(port);
    long before = resident_kib(workers.front());

    TlsOptions slow_options = sni_a();
    slow_options.receive_buffer = 4096;
    TlsClient slow(port, slow_options);
    REQUIRE(slow.handshake());
    REQUIRE(slow.send(get_request("/big.bin", "", "a.test")));
    std::this_thread::sleep_for(300ms);  // the response is now stuck in flight
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 10; ++i) expect_next_tls_client_served(port);
    CHECK(ms_since(start) < 2000);
    long during = resident_kib(workers.front());
    INFO("worker RSS " << before << " KiB before, " << during << " KiB while stalled");
    if (rss_tells_memory) CHECK(during - before < 8 * 1024);

    // All of it arrives, in order.
    ResponseReader reader(slow);
    auto head = reader.read_head(5s);
    REQUIRE(head);
    CHECK(head->header("content-length") == std::to_string(size));
    uint64_t received = 0;
    bool intact = true;
    for (char byte : reader.buffered()) intact = intact && byte == pattern_byte(received++);
    std::string chunk(1 << 16, '\0');
    auto deadline = std::chrono::steady_clock::now() + 30s;
    while (received < size && std::chrono::steady_clock::now() < deadline) {
        ssize_t n = slow.read_some(chunk.data(), chunk.size(), 5000);
        if (n <= 0) break;
        for (ssize_t i = 0; i < n; ++i)
            intact = intact && chunk[static_cast<size_t>(i)] ==
                                   pattern_byte(received + static_cast<uint64_t>(i));
        received += static_cast<uint64_t>(n);
    }
    CHECK(received == size);
    CHECK(intact);
    if (rss_tells_memory) CHECK(resident_kib(workers.front()) - before < 8 * 1024);
    expect_quiet_log(portico);
}

// A client that never reads and asks for a KeyUpdate again and again: each
// answer is ciphertext the server must keep for it. Past a bound the
// server stops reading that client (its input waits in the kernel), so the
// worker's memory stays flat; it grew by 25 MB per 500,000 messages when
// every answer was kept.
TEST_CASE("tls: a KeyUpdate flood from a client that never reads does not grow the worker",
          "[tls][bad-input]") {
    Certificates certs;
    Site site;
    UpstreamServer upstream;
    Portico portico(tls_bad_input_config(certs, site, upstream.address()));
    uint16_t port = tls_port(portico);
    auto workers = portico.worker_pids();
    REQUIRE(workers.size() == 1);
    expect_next_tls_client_served(port);
    long before = resident_kib(workers.front());

    TlsOptions options = sni_a();
    options.max_version = TLS1_3_VERSION;
    options.min_version = TLS1_3_VERSION;
    options.receive_buffer = 4096;  // the server's answers back up at once
    TlsClient flood(port, options);
    REQUIRE(flood.handshake());
    int sent = flood.send_key_updates(400'000, 1s);
    INFO(sent << " KeyUpdates sent");
    CHECK(sent > 1000);
    // Time for the worker to read whatever it will read of them.
    std::this_thread::sleep_for(500ms);
    long after = resident_kib(workers.front());
    INFO("worker RSS " << before << " KiB before, " << after << " KiB after");
    if (rss_tells_memory) CHECK(after - before < 3 * 1024);
    for (int i = 0; i < 3; ++i) expect_next_tls_client_served(port);
    CHECK(portico.worker_pids() == workers);
}
