// Listeners with `proxy_protocol = true`: the PROXY header (v1, v2 over IPv4
// and IPv6, LOCAL) read before the first request and before TLS names the
// client for the access log and the upstream's X-Forwarded-For / X-Real-IP;
// a connection without a valid one (garbage, a bad signature, too slow, cut
// short) is closed and counted, nothing of it reaches the upstream, and the
// next client is served.
#include <sys/socket.h>

#include <csignal>
#include <thread>

#include <catch2/catch.hpp>

#include "client_address_support.hpp"
#include "http2_support.hpp"
#include "proxy_support.hpp"
#include "tls_support.hpp"
#include "upstream_server.hpp"

using namespace portico::test;

// Its own namespace: in a unity build the test files share one translation
// unit, and their helpers (Answer, fake_path...) must not meet.
namespace proxy_protocol_test {

namespace {

// One worker, every listener behind the PROXY protocol, h2c on, a JSON
// access log, the metrics listener, a short header_timeout.
std::string config(const UpstreamServer& upstream, const std::string& access_log,
                   uint16_t metrics_port, const std::string& server_options = "") {
    return "[server]\nlisten = [{ address = \"{listen}\", proxy_protocol = true }]\nworkers = 1\n"
           "header_timeout = \"500ms\"\n" +
           server_options + "\n[http2]\ncleartext = true\n\n[log]\naccess = \"" + access_log +
           "\"\naccess_format = \"json\"\n\n[upstream.app]\nservers = [\"" + upstream.address() +
           "\"]\n\n[[location]]\nprefix = \"/\"\nproxy = \"app\"\n\n[metrics]\nlisten = "
           "\"127.0.0.1:" +
           std::to_string(metrics_port) + "\"\n";
}

double errors(uint16_t metrics_port, const std::string& reason) {
    return metric(metrics_port, "portico_proxy_protocol_errors_total{reason=\"" + reason + "\"}");
}

// `header` then a GET on a new connection: the client the upstream was told of.
std::string forwarded_client(uint16_t port, const UpstreamServer& upstream,
                             const std::string& header, const std::string& target) {
    Client client(port);
    client.send(header + get_request(target));
    ResponseReader reader(client.fd());
    auto response = reader.read();
    REQUIRE(response);
    CHECK(response->status == 200);
    ReceivedRequest request = upstream.last_request();
    CHECK(request.target == target);
    CHECK(request.header("x-forwarded-for") == request.header("x-real-ip"));
    return request.header("x-real-ip");
}

}  // namespace

TEST_CASE("the PROXY header names the client: v1, v2 over IPv4 and IPv6, LOCAL",
          "[proxy-protocol]") {
    UpstreamServer upstream;
    TempDir logs;
    std::string access_log = logs.path() + "/access.log";
    uint16_t metrics_port = unused_port();
    Portico portico(config(upstream, access_log, metrics_port));

    CHECK(forwarded_client(portico.port(), upstream, proxy_v1("203.0.113.7"), "/v1") ==
          "203.0.113.7");
    CHECK(forwarded_client(portico.port(), upstream, proxy_v1("2001:db8::7"), "/v1-6") ==
          "2001:db8::7");
    CHECK(forwarded_client(portico.port(), upstream, proxy_v2("198.51.100.4"), "/v2") ==
          "198.51.100.4");
    CHECK(forwarded_client(portico.port(), upstream, proxy_v2("2001:db8::42"), "/v2-6") ==
          "2001:db8::42");
    // A balancer's health check: its own connection, no client to name.
    CHECK(forwarded_client(portico.port(), upstream, proxy_v2_local(), "/local") == "127.0.0.1");
    CHECK(forwarded_client(portico.port(), upstream, "PROXY UNKNOWN\r\n", "/unknown") ==
          "127.0.0.1");

    // Once per connection: every request on it is from that client, and a
    // second header is just a bad request line.
    Client client(portico.port());
    ResponseReader reader(client.fd());
    client.send(proxy_v1("203.0.113.8") + get_request("/a"));
    REQUIRE(reader.read());
    client.send(get_request("/b"));
    REQUIRE(reader.read());
    CHECK(upstream.last_request().header("x-real-ip") == "203.0.113.8");
    client.send(proxy_v1("203.0.113.9") + get_request("/c"));
    auto refused = reader.read();
    REQUIRE(refused);
    CHECK(refused->status == 400);
    CHECK(upstream.last_request().target == "/b");

    // A header that comes in pieces, and HTTP/2 (h2c) behind it.
    h2::ClientOptions options;
    options.send_preface = false;
    h2::Client h2(portico.port(), options);
    std::string header = proxy_v2("2001:db8::99");
    REQUIRE(h2.send_raw(header.substr(0, 5)));
    std::this_thread::sleep_for(50ms);
    REQUIRE(h2.send_raw(header.substr(5, 20)));
    std::this_thread::sleep_for(50ms);
    REQUIRE(h2.send_raw(header.substr(25)));
    h2.send_preface();
    uint32_t stream = h2.get("/h2");
    REQUIRE(h2.wait_stream(stream));
    CHECK(h2.result(stream).status == 200);
    CHECK(upstream.last_request().header("x-real-ip") == "2001:db8::99");

    CHECK(access_log_clients(access_log, 10) ==
          std::vector<std::string>{"203.0.113.7", "2001:db8::7", "198.51.100.4", "2001:db8::42",
                                   "127.0.0.1", "127.0.0.1", "203.0.113.8", "203.0.113.8",
                                   "203.0.113.8", "2001:db8::99"});
    for (const char* reason : {"invalid", "timeout", "truncated"})
        CHECK(errors(metrics_port, reason) == 0);
}

TEST_CASE("the PROXY address is a peer like any other for trusted_proxies", "[proxy-protocol]") {
    UpstreamServer upstream;
    TempDir logs;
    uint16_t metrics_port = unused_port();
    Portico portico(config(upstream, logs.path() + "/access.log", metrics_port,
                           "trusted_proxies = [\"10.0.0.0/8\"]\n"));
    // The balancer (10.1.2.3) passed on what an inner proxy said.
    Client client(portico.port());
    client.send(proxy_v1("10.1.2.3") + get_request("/", "X-Forwarded-For: 198.51.100.9\r\n"));
    ResponseReader reader(client.fd());
    REQUIRE(reader.read());
    CHECK(upstream.last_request().header("x-real-ip") == "198.51.100.9");
    // The loopback is not trusted: its X-Forwarded-For is not taken.
    CHECK(forwarded_client(portico.port(), upstream, proxy_v1("203.0.113.7"), "/x") ==
          "203.0.113.7");
}

TEST_CASE("a connection without a valid PROXY header is closed, counted and never proxied",
          "[proxy-protocol]") {
    UpstreamServer upstream;
    TempDir logs;
    uint16_t metrics_port = unused_port();
    Portico portico(config(upstream, logs.path() + "/access.log", metrics_port));

    struct Bad {
        const char* what;
        std::string bytes;
    };
    std::string bad_v2 = proxy_v2("198.51.100.4");
    bad_v2[5] = 'X';  // the signature
    std::string v2_version = proxy_v2("198.51.100.4");
    v2_version[12] = 0x31;
    const std::vector<Bad> bad = {
        {"a request without the header", get_request("/no-header")},
        {"a bad v2 signature", bad_v2 + get_request("/bad-signature")},
        {"a v2 version that does not exist", v2_version + get_request("/bad-version")},
        {"a v1 line that lies",
         "PROXY TCP4 203.0.113.300 127.0.0.1 1 80\r\n" + get_request("/lie")},
        {"a v1 line that never ends", "PROXY TCP4 " + std::string(200, '1')},
        {"a TLS ClientHello", client_hello(0x0303, {0xc02f}, "a.test")},
    };
    for (const Bad& b : bad) {
        INFO(b.what);
        Client client(portico.port());
        client.send(b.bytes);
        CHECK(client.closed_by_server(2s));
    }
    CHECK(errors(metrics_port, "invalid") == static_cast<double>(bad.size()));

    // Cut short: the client closes inside the header.
    {
        Client client(portico.port());
        client.send(proxy_v1("203.0.113.7").substr(0, 20));
        std::this_thread::sleep_for(50ms);
    }
    // Too slow: the rest never comes within header_timeout (500ms).
    auto start = std::chrono::steady_clock::now();
    {
        Client client(portico.port());
        client.send(proxy_v1("203.0.113.7").substr(0, 20));
        CHECK(client.closed_by_server(3s));
        CHECK(ms_since(start) >= 400);
    }
    // A TCP health check that connects and leaves is not an error.
    { Client client(portico.port()); }
    REQUIRE(UpstreamServer::wait_until([&] { return errors(metrics_port, "truncated") == 1; }, 2s));
    CHECK(errors(metrics_port, "timeout") == 1);
    CHECK(errors(metrics_port, "invalid") == static_cast<double>(bad.size()));
    CHECK(upstream.request_count() == 0);

    // Logged, but at most once a second, with the count of the others.
    CHECK(portico.wait_for_log("to a proxy_protocol listener"));
    std::string log = portico.log();
    size_t lines = 0;
    for (size_t at = log.find("to a proxy_protocol listener"); at != std::string::npos;
         at = log.find("to a proxy_protocol listener", at + 1))
        ++lines;
    // Eight failures within about a second: one line, two at most, three
    // if the second boundary falls badly.
    CHECK(lines <= 3);

    // The next client is served.
    CHECK(forwarded_client(portico.port(), upstream, proxy_v1("203.0.113.7"), "/next") ==
          "203.0.113.7");
}

TEST_CASE("TLS starts after the PROXY header", "[proxy-protocol][tls]") {
    Certificates certs;
    UpstreamServer upstream;
    TempDir logs;
    std::string access_log = logs.path() + "/access.log";
    uint16_t metrics_port = unused_port();
    Portico portico(
        "[server]\nlisten = [\"{listen}\"]\nworkers = 1\nheader_timeout = \"500ms\"\n\n[tls]\n"
        "listen = [{ address = \"127.0.0.1:0\", proxy_protocol = true }]\ncertificates = [" +
        certs.entry("a") + "]\n\n[log]\naccess = \"" + access_log +
        "\"\naccess_format = \"json\"\n\n[upstream.app]\nservers = [\"" + upstream.address() +
        "\"]\n\n[[location]]\nprefix = \"/\"\nproxy = \"app\"\n\n[metrics]\nlisten = \"127.0.0.1:" +
        std::to_string(metrics_port) + "\"\n");
    uint16_t port = tls_port(portico);

    for (const std::string& header : {proxy_v1("203.0.113.7"), proxy_v2("2001:db8::7")}) {
        TlsClient client(port, sni_a());
        REQUIRE(::send(client.fd(), header.data(), header.size(), 0) ==
                static_cast<ssize_t>(header.size()));
        REQUIRE(client.handshake());
        REQUIRE(client.send(get_request("/tls", "", "a.test")));
        ResponseReader reader(client);
        auto response = reader.read();
        REQUIRE(response);
        CHECK(response->status == 200);
    }
    CHECK(access_log_clients(access_log, 2) ==
          std::vector<std::string>{"203.0.113.7", "2001:db8::7"});
    CHECK(upstream.last_request().header("x-real-ip") == "2001:db8::7");
    CHECK(upstream.last_request().header("x-forwarded-proto") == "https");

    // A TLS client that sends no header is refused, and not by the TLS layer.
    {
        TlsClient client(port, sni_a());
        CHECK_FALSE(client.handshake(3s));
    }
    CHECK(errors(metrics_port, "invalid") == 1);
    // The cleartext listener is not behind the PROXY protocol.
    auto plain = proxy_fetch(portico.port(), get_request("/plain"));
    REQUIRE(plain);
    CHECK(plain->status == 200);
    CHECK(upstream.last_request().header("x-real-ip") == "127.0.0.1");
}

TEST_CASE("a reload turns the PROXY protocol on for a listener it keeps",
          "[proxy-protocol][reload]") {
    UpstreamServer upstream;
    TempDir logs;
    uint16_t metrics_port = unused_port();
    std::string with_header = config(upstream, logs.path() + "/access.log", metrics_port);
    std::string without = with_header;
    without.replace(without.find("{ address = \"{listen}\", proxy_protocol = true }"),
                    std::string("{ address = \"{listen}\", proxy_protocol = true }").size(),
                    "\"{listen}\"");
    Portico portico(without);
    auto plain = proxy_fetch(portico.port(), get_request("/before"));
    REQUIRE(plain);
    CHECK(plain->status == 200);

    portico.rewrite_config(with_header);
    portico.signal(SIGHUP);
    REQUIRE(portico.wait_for_log("reloaded"));
    // The same socket (its accept queue kept), read by the new workers with
    // the header first.
    REQUIRE(UpstreamServer::wait_until(
        [&] {
            Client client(portico.port());
            client.send(proxy_v1("203.0.113.7") + get_request("/after"));
            ResponseReader reader(client.fd());
            auto response = reader.read(2s);
            return response && response->status == 200 &&
                   upstream.last_request().header("x-real-ip") == "203.0.113.7";
        },
        5s));
    Client client(portico.port());
    client.send(get_request("/no-header"));
    CHECK(client.closed_by_server(2s));
    CHECK(upstream.last_request().target == "/after");
}

}  // namespace proxy_protocol_test
