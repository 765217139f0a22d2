// The real client behind a trusted load balancer ([server] trusted_proxies):
// the rightmost X-Forwarded-For entry that is not trusted is what the access
// log writes, what ip_hash balances on and what goes upstream as X-Real-IP
// and at the end of X-Forwarded-For, over HTTP/1.1 and HTTP/2; a peer that
// is not trusted is the client, whatever it claims.
#include <algorithm>
#include <memory>
#include <set>

#include <catch2/catch.hpp>

#include "client_address_support.hpp"
#include "http2_support.hpp"
#include "proxy_support.hpp"
#include "upstream_server.hpp"

using namespace portico::test;

// Its own namespace: in a unity build the test files share one translation
// unit, and their helpers (Answer, fake_path...) must not meet.
namespace client_address_test {

namespace {

// One worker, h2c beside HTTP/1.1, a JSON access log in the temp folder.
std::string config(const std::vector<std::string>& servers, const std::string& trusted,
                   const std::string& access_log, const std::string& upstream_options = "") {
    return proxy_config(servers, upstream_options, "", "trusted_proxies = " + trusted + "\n") +
           "\n[http2]\ncleartext = true\n\n[log]\naccess = \"" + access_log +
           "\"\naccess_format = \"json\"\n";
}

}  // namespace

TEST_CASE("a trusted peer's X-Forwarded-For names the client, over HTTP/1.1 and HTTP/2",
          "[client-address]") {
    UpstreamServer upstream;
    TempDir logs;
    std::string access_log = logs.path() + "/access.log";
    Portico portico(config({upstream.address()}, "[\"127.0.0.1\", \"10.0.0.0/8\"]", access_log));

    Client client(portico.port());
    ResponseReader reader(client.fd());
    // A spoofed entry on the left, the real client, then a trusted hop.
    client.send(get_request("/one", "X-Forwarded-For: 6.6.6.6, 198.51.100.7, 10.0.0.2\r\n"));
    auto response = reader.read();
    REQUIRE(response);
    CHECK(response->status == 200);
    ReceivedRequest request = upstream.last_request();
    CHECK(request.header("x-real-ip") == "198.51.100.7");
    // nginx's $proxy_add_x_forwarded_for after real_ip: the list received,
    // then the client decided on, so the app may trust the rightmost entry.
    CHECK(request.header("x-forwarded-for") == "6.6.6.6, 198.51.100.7, 10.0.0.2, 198.51.100.7");
    CHECK(request.count("x-forwarded-for") == 1);

    // The next request on the same connection is judged on its own.
    client.send(get_request("/two"));
    REQUIRE(reader.read());
    CHECK(upstream.last_request().header("x-real-ip") == "127.0.0.1");
    CHECK(upstream.last_request().header("x-forwarded-for") == "127.0.0.1");

    // All trusted: the leftmost. Not an address: the last trusted hop.
    client.send(get_request("/three", "X-Forwarded-For: 10.9.9.9, 10.0.0.3\r\n"));
    REQUIRE(reader.read());
    CHECK(upstream.last_request().header("x-real-ip") == "10.9.9.9");
    client.send(get_request("/four", "X-Forwarded-For: 198.51.100.7, unknown\r\n"));
    REQUIRE(reader.read());
    CHECK(upstream.last_request().header("x-real-ip") == "127.0.0.1");

    h2::Client h2(portico.port());
    uint32_t stream = h2.get("/five", {{"x-forwarded-for", "2001:db8::5, 10.0.0.9"}});
    REQUIRE(h2.wait_stream(stream));
    CHECK(h2.result(stream).status == 200);
    request = upstream.last_request();
    CHECK(request.target == "/five");
    CHECK(request.header("x-real-ip") == "2001:db8::5");
    CHECK(request.header("x-forwarded-for") == "2001:db8::5, 10.0.0.9, 2001:db8::5");

    auto clients = access_log_clients(access_log, 5);
    CHECK(clients == std::vector<std::string>{"198.51.100.7", "127.0.0.1", "10.9.9.9", "127.0.0.1",
                                              "2001:db8::5"});
}

TEST_CASE("an untrusted peer is the client whatever its X-Forwarded-For says", "[client-address]") {
    UpstreamServer upstream;
    TempDir logs;
    std::string access_log = logs.path() + "/access.log";
    // Loopback is not in the list.
    Portico portico(config({upstream.address()}, "[\"10.0.0.0/8\", \"::1\"]", access_log));

    auto response =
        proxy_fetch(portico.port(), get_request("/", "X-Forwarded-For: 198.51.100.7\r\n"));
    REQUIRE(response);
    CHECK(response->status == 200);
    CHECK(upstream.last_request().header("x-real-ip") == "127.0.0.1");
    CHECK(upstream.last_request().header("x-forwarded-for") == "198.51.100.7, 127.0.0.1");

    h2::Client h2(portico.port());
    uint32_t stream = h2.get("/h2", {{"x-forwarded-for", "198.51.100.8"}});
    REQUIRE(h2.wait_stream(stream));
    CHECK(upstream.last_request().header("x-real-ip") == "127.0.0.1");
    CHECK(upstream.last_request().header("x-forwarded-for") == "198.51.100.8, 127.0.0.1");
    CHECK(access_log_clients(access_log, 2) == std::vector<std::string>{"127.0.0.1", "127.0.0.1"});
}

TEST_CASE("ip_hash balances on the client a trusted proxy names", "[client-address]") {
    std::vector<std::unique_ptr<UpstreamServer>> servers;
    std::vector<std::string> addresses;
    for (int i = 0; i < 3; ++i) {
        servers.push_back(std::make_unique<UpstreamServer>());
        addresses.push_back(servers.back()->address());
    }
    TempDir logs;
    Portico portico(
        config(addresses, "[\"127.0.0.1\"]", logs.path() + "/access.log", "balance = \"ip_hash\""));
    auto server_of = [&](const std::string& client) {
        std::vector<size_t> before;
        for (const auto& server : servers) before.push_back(server->request_count());
        auto response =
            proxy_fetch(portico.port(), get_request("/", "X-Forwarded-For: " + client + "\r\n"));
        REQUIRE(response);
        for (size_t i = 0; i < servers.size(); ++i)
            if (servers[i]->request_count() > before[i]) return i;
        FAIL("no server got the request");
        return servers.size();
    };
    std::set<size_t> used;
    for (int network = 0; network < 12; ++network) {
        std::string client = "198.51." + std::to_string(network) + ".9";
        size_t first = server_of(client);
        // The same client (its /24, as nginx hashes it) keeps its server.
        CHECK(server_of(client) == first);
        CHECK(server_of("198.51." + std::to_string(network) + ".200") == first);
        used.insert(first);
    }
    // From one peer, yet spread: every one of them was the loopback before.
    CHECK(used.size() >= 2);
}

TEST_CASE(
    "$request_id: sent upstream as X-Request-ID and written in the access log, a trusted "
    "proxy's kept",
    "[client-address]") {
    UpstreamServer upstream;
    TempDir logs;
    std::string access_log = logs.path() + "/access.log";
    Portico portico(config({upstream.address()}, "[\"127.0.0.1\"]", access_log));

    // From a trusted peer: its id goes on.
    auto response = proxy_fetch(portico.port(), get_request("/kept", "X-Request-ID: lb-42\r\n"));
    REQUIRE(response);
    CHECK(upstream.last_request().header("x-request-id") == "lb-42");

    h2::Client h2(portico.port());
    uint32_t stream = h2.get("/made");
    REQUIRE(h2.wait_stream(stream));
    std::string made(upstream.last_request().header("x-request-id"));
    CHECK(made.size() == 32);
    CHECK(made.find_first_not_of("0123456789abcdef") == std::string::npos);

    CHECK(access_log_values(access_log, "request_id", 2) ==
          std::vector<std::string>{"lb-42", made});
}

}  // namespace client_address_test
