// Which Host the upstream gets, as nginx's default `proxy_set_header Host
// $proxy_host` and portico's spec say: with preserve_host = false a named
// upstream's name, an inline `proxy = "http://host:port"`'s host:port; the
// client's Host (HTTP/1.1) or :authority (HTTP/2) with preserve_host on.
// A real upstream records the Host it got.
#include <catch2/catch.hpp>

#include <string>

#include "harness.hpp"
#include "http2_support.hpp"
#include "proxy_support.hpp"
#include "upstream_server.hpp"

using namespace portico::test;

// Its own namespace: in a unity build the test files share one translation unit.
namespace proxy_host_test {

namespace {

enum class Protocol { http1, http2 };

// GETs `target` with Host (or :authority) front.test; its status.
int get(Protocol protocol, uint16_t port, const std::string& target) {
    if (protocol == Protocol::http1) {
        Client client(port);
        client.send("GET " + target + " HTTP/1.1\r\nHost: front.test\r\n\r\n");
        std::optional<Response> response = client.read_response();
        REQUIRE(response);
        return response->status;
    }
    h2::Client client(port);
    uint32_t id = client.get(target, {}, "GET", "front.test");
    INFO(client.trace());
    REQUIRE(client.wait_stream(id));
    return client.result(id).status;
}

}  // namespace

TEST_CASE("preserve_host = false sends a named upstream's name, an inline URL's host:port",
          "[proxy]") {
    UpstreamServer upstream;
    const std::string address = upstream.address();
    Portico portico(
        "[server]\nlisten = [\"{listen}\"]\nworkers = 1\n\n[http2]\ncleartext = true\n"
        "\n[upstream.app_v2]\nservers = [\"" +
        address +
        "\"]\n\n"
        "[[location]]\nprefix = \"/named/\"\nproxy = \"app_v2\"\n"
        "preserve_host = false\n\n"
        "[[location]]\nprefix = \"/inline/\"\nproxy = \"http://" +
        address +
        "\"\n"
        "preserve_host = false\n\n"
        "[[location]]\nprefix = \"/kept/\"\nproxy = \"app_v2\"\n");
    INFO(portico.log());
    auto protocol = GENERATE(Protocol::http1, Protocol::http2);
    INFO((protocol == Protocol::http1 ? "HTTP/1.1" : "HTTP/2"));
    uint16_t port = portico.port();
    struct Case {
        const char* target;
        std::string host;
    };
    for (const Case& each :
         {Case{"/named/a", "app_v2"}, Case{"/inline/b", address}, Case{"/kept/c", "front.test"}}) {
        INFO(each.target);
        CHECK(get(protocol, port, each.target) == 200);
        ReceivedRequest received = upstream.last_request();
        CHECK(received.target == each.target);
        CHECK(received.header("host") == each.host);
        CHECK(received.count("host") == 1);
        // The app still learns what the client asked for.
        CHECK(received.header("x-forwarded-host") == "front.test");
    }
}

TEST_CASE("a request without Host sends what preserve_host = false would", "[proxy]") {
    UpstreamServer upstream;
    Portico portico(proxy_config({upstream.address()}));
    std::optional<Response> response = proxy_fetch(portico.port(), "GET /nohost HTTP/1.0\r\n\r\n");
    REQUIRE(response);
    CHECK(response->status == 200);
    ReceivedRequest request = upstream.last_request();
    INFO(request.head);
    CHECK(request.header("host") == "app");  // proxy_config's [upstream.app]
    CHECK(request.count("host") == 1);
}

}  // namespace proxy_host_test
