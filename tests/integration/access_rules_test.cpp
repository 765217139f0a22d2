// allow and deny with the real binary: the most specific entry judges the
// real client (X-Forwarded-For from a trusted peer, or the peer itself over
// IPv4 and IPv6), 403 for a refused one and the next client served, over
// HTTP/1.1 and HTTP/2; portico_access_denied_total and portico_limited_total
// count the refusals, and the access log says which rule refused.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "client_address_support.hpp"
#include "http2_support.hpp"
#include "metrics_support.hpp"
#include "proxy_support.hpp"
#include "upstream_server.hpp"

using namespace portico::test;

// Its own namespace: in a unity build the test files share one translation
// unit, and their helpers must not meet.
namespace access_rules_test {

namespace {

// One worker on 127.0.0.1 (trusted: its X-Forwarded-For names the client)
// and on [::1] (not trusted), h2c, the counters, a JSON access log.
std::string config(const std::string& access_log, const std::string& upstream) {
    return R"([server]
listen = ["{listen}", "[::1]:0"]
workers = 1
trusted_proxies = ["127.0.0.1"]

[http2]
cleartext = true

[metrics]
listen = "127.0.0.1:0"

[log]
access = ")" +
           access_log +
           R"("
access_format = "json"

[upstream.app]
servers = [")" +
           upstream + R"("]

[limit.per_ip]
key = "$remote_addr"
rate = "1r/m"

# nginx: allow A; allow B; deny all;
[[location]]
prefix = "/two/"
name = "two"
respond = { status = 200, body = "two\n" }
allow = ["198.51.100.7", "203.0.113.0/24"]
deny = ["all"]

# nginx: deny A; allow B/8; deny all; (written in another order)
[[location]]
prefix = "/nested/"
name = "nested"
respond = { status = 200, body = "nested\n" }
deny = ["all", "10.0.0.1"]
allow = ["10.0.0.0/8"]

# A broader allow around a narrower deny around a narrower allow.
[[location]]
prefix = "/six/"
name = "six"
respond = { status = 200, body = "six\n" }
allow = ["2001:db8::/32", "2001:db8:bad:1::/64"]
deny = ["2001:db8:bad::/48", "::1", "127.0.0.1"]

[[location]]
prefix = "/limited/"
name = "limited"
respond = { status = 200, body = "limited\n" }
limit = ["per_ip"]

[[location]]
prefix = "/slow/"
name = "slow"
proxy = "app"
max_concurrent = { key = "$remote_addr", count = 1 }

[[location]]
prefix = "/"
name = "open"
respond = { status = 200, body = "open\n" }
)";
}

// The port of the [::1] listener, from the master's log.
uint16_t ipv6_port(const Portico& portico) {
    std::string log = portico.log();
    std::string marker = "listening on [::1]:0 (port ";
    size_t at = log.find(marker);
    REQUIRE(at != std::string::npos);
    return static_cast<uint16_t>(std::stoi(log.substr(at + marker.size())));
}

// A connection from ::1.
int connect_ipv6(uint16_t port) {
    int fd = ::socket(AF_INET6, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_in6 address{};
    address.sin6_family = AF_INET6;
    address.sin6_port = htons(port);
    address.sin6_addr = in6addr_loopback;
    REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    return fd;
}

// The status of GET `target` on `client` from the client `forwarded` names
// (none: the peer, 127.0.0.1).
int status_of(Client& client, ResponseReader& reader, const std::string& target,
              const std::string& forwarded = "") {
    client.send(
        get_request(target, forwarded.empty() ? "" : "X-Forwarded-For: " + forwarded + "\r\n"));
    auto response = reader.read();
    REQUIRE(response);
    return response->status;
}

// The "refused" of each line of the JSON access log ("" where null), once
// it has `count` lines (5 s at most).
std::vector<std::string> refused_fields(const std::string& path, size_t count) {
    std::vector<std::string> refused;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    do {
        refused.clear();
        std::istringstream lines(read_text(path));
        for (std::string line; std::getline(lines, line);) {
            nlohmann::json entry = nlohmann::json::parse(line);
            refused.push_back(entry.at("refused").is_null() ? ""
                                                            : entry["refused"].get<std::string>());
        }
        if (refused.size() >= count) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    } while (std::chrono::steady_clock::now() < deadline);
    return refused;
}

std::string denied(const std::string& location) {
    return "portico_access_denied_total{location=\"" + location + "\",reason=\"address\"}";
}

std::string limited(const std::string& location, const std::string& limit) {
    return "portico_limited_total{location=\"" + location + "\",limit=\"" + limit + "\"}";
}

}  // namespace

TEST_CASE("allow and deny: the most specific entry judges the client, over HTTP/1.1", "[access]") {
    UpstreamServer upstream;
    TempDir logs;
    Portico portico(config(logs.path() + "/access.log", upstream.address()));
    Client client(portico.port());
    ResponseReader reader(client.fd());

    // allow A; allow B; deny all.
    CHECK(status_of(client, reader, "/two/", "198.51.100.7") == 200);
    CHECK(status_of(client, reader, "/two/", "203.0.113.200") == 200);
    // Refused, then the next request on the same connection is served.
    CHECK(status_of(client, reader, "/two/", "198.51.100.8") == 403);
    CHECK(status_of(client, reader, "/two/", "2001:db8::7") == 403);
    CHECK(status_of(client, reader, "/two/", "203.0.113.1") == 200);
    CHECK(status_of(client, reader, "/two/") == 403);  // the peer itself, 127.0.0.1

    // deny A; allow B/8; deny all, whatever order the lists are written in.
    CHECK(status_of(client, reader, "/nested/", "10.0.0.1") == 403);
    CHECK(status_of(client, reader, "/nested/", "10.0.0.2") == 200);
    CHECK(status_of(client, reader, "/nested/", "11.0.0.2") == 403);

    // /32 allow inside a /48 deny inside a /32 allow; no entry: it passes.
    CHECK(status_of(client, reader, "/six/", "2001:db8:1::1") == 200);
    CHECK(status_of(client, reader, "/six/", "2001:db8:bad:2::1") == 403);
    CHECK(status_of(client, reader, "/six/", "2001:db8:bad:1::1") == 200);
    CHECK(status_of(client, reader, "/six/", "2001:db9::1") == 200);
    CHECK(status_of(client, reader, "/six/") == 403);  // 127.0.0.1

    // An IPv4-mapped client is judged by the IPv4 entries.
    CHECK(status_of(client, reader, "/two/", "::ffff:198.51.100.7") == 200);
    CHECK(status_of(client, reader, "/nested/", "::ffff:10.0.0.1") == 403);

    // A location without rules serves everyone.
    CHECK(status_of(client, reader, "/", "198.51.100.8") == 200);

    // A new client after all that.
    auto response = fetch(portico.port(), "/nested/", "X-Forwarded-For: 10.9.9.9\r\n");
    REQUIRE(response);
    CHECK(response->status == 200);
    CHECK(response->body == "nested\n");

    uint16_t metrics = metrics_port(portico);
    std::string text = scrape_when(metrics, denied("two"), 3);
    CHECK(sample(text, denied("nested")) == 3);
    CHECK(sample(text, denied("six")) == 2);
    CHECK(sample(text, denied("open")) == -1);  // none refused: no series

    // The access log names the rule that refused, null for the others.
    std::vector<std::string> refused = refused_fields(logs.path() + "/access.log", 18);
    REQUIRE(refused.size() == 18);
    CHECK(refused[0] == "");
    CHECK(refused[2] == "deny");
    CHECK(refused[4] == "");
    CHECK(refused[5] == "deny");
}

TEST_CASE("allow and deny over HTTP/2, and over IPv6 from the peer itself", "[access]") {
    UpstreamServer upstream;
    TempDir logs;
    Portico portico(config(logs.path() + "/access.log", upstream.address()));

    h2::Client h2(portico.port());
    REQUIRE(h2.connected());
    uint32_t refused = h2.get("/two/", {{"x-forwarded-for", "192.0.2.1"}});
    uint32_t allowed = h2.get("/two/", {{"x-forwarded-for", "203.0.113.9"}});
    uint32_t nested = h2.get("/nested/", {{"x-forwarded-for", "10.0.0.1"}});
    REQUIRE(h2.wait_streams({refused, allowed, nested}));
    CHECK(h2.result(refused).status == 403);
    CHECK(h2.result(allowed).status == 200);
    CHECK(h2.result(allowed).body == "two\n");
    CHECK(h2.result(nested).status == 403);
    // The session goes on after a refusal.
    uint32_t next = h2.get("/nested/", {{"x-forwarded-for", "10.0.0.3"}});
    REQUIRE(h2.wait_stream(next));
    CHECK(h2.result(next).status == 200);

    // From ::1 itself (not a trusted peer: its X-Forwarded-For is ignored).
    uint16_t port = ipv6_port(portico);
    int fd = connect_ipv6(port);
    ResponseReader reader(fd);
    auto send = [&](const std::string& target) {
        std::string request = get_request(target, "X-Forwarded-For: 2001:db8:1::1\r\n");
        REQUIRE(::write(fd, request.data(), request.size()) ==
                static_cast<ssize_t>(request.size()));
        auto response = reader.read();
        REQUIRE(response);
        return response->status;
    };
    CHECK(send("/six/") == 403);  // deny ::1
    CHECK(send("/two/") == 403);  // deny all
    CHECK(send("/nested/") == 403);
    CHECK(send("/") == 200);
    ::close(fd);
    // The next IPv6 client is judged the same, and served where allowed.
    fd = connect_ipv6(port);
    ResponseReader again(fd);
    std::string request = get_request("/");
    REQUIRE(::write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size()));
    auto response = again.read();
    REQUIRE(response);
    CHECK(response->status == 200);
    ::close(fd);

    uint16_t metrics = metrics_port(portico);
    std::string text = scrape_when(metrics, denied("nested"), 2);
    CHECK(sample(text, denied("two")) == 2);
    CHECK(sample(text, denied("six")) == 1);
    std::vector<std::string> clients = access_log_clients(logs.path() + "/access.log", 9);
    REQUIRE(clients.size() == 9);
    CHECK(clients[4] == "::1");
}

TEST_CASE("limits: portico_limited_total by location and limit, and the access log's refused",
          "[access]") {
    UpstreamServer upstream([](const ReceivedRequest&) {
        return Reply().wait_release().send("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nslow\n");
    });
    TempDir logs;
    Portico portico(config(logs.path() + "/access.log", upstream.address()));
    uint16_t metrics = metrics_port(portico);
    // Every series is there before the first refusal.
    std::string text = scrape(metrics);
    CHECK(sample(text, limited("limited", "per_ip")) == 0);
    CHECK(sample(text, limited("slow", "max_concurrent")) == 0);

    // 1r/m, no burst: the first passes, the next is refused with 429.
    REQUIRE(fetch(portico.port(), "/limited/")->status == 200);
    REQUIRE(fetch(portico.port(), "/limited/")->status == 429);
    scrape_when(metrics, limited("limited", "per_ip"), 1);

    // max_concurrent 1: a second request while the first is upstream is refused.
    Client first(portico.port());
    first.send(get_request("/slow/a"));
    REQUIRE(UpstreamServer::wait_until([&] { return upstream.request_count() == 1; },
                                       std::chrono::seconds(5)));
    REQUIRE(fetch(portico.port(), "/slow/b")->status == 429);
    upstream.release_held();
    auto response = first.read_response();
    REQUIRE(response);
    CHECK(response->status == 200);
    text = scrape_when(metrics, limited("slow", "max_concurrent"), 1);
    CHECK(sample(text, limited("limited", "per_ip")) == 1);

    std::vector<std::string> refused = refused_fields(logs.path() + "/access.log", 4);
    REQUIRE(refused.size() == 4);
    CHECK(refused[0] == "");
    CHECK(refused[1] == "per_ip");
    CHECK(refused[2] == "max_concurrent");  // logged when answered, before the held one
    CHECK(refused[3] == "");
}

TEST_CASE("basic auth refusals are counted as reason auth", "[access][auth]") {
    TempDir files;
    std::string htpasswd = files.write("htpasswd", "ann:$apr1$abcdefgh$h9FWgUz3n9YxylKLlR5SQ/\n");
    Portico portico(
        "[server]\nlisten = [\"{listen}\"]\nworkers = 1\n\n[metrics]\nlisten = "
        "\"127.0.0.1:0\"\n\n[[location]]\nname = \"private\"\nprefix = \"/\"\n"
        "respond = { status = 200, body = \"in\" }\nauth = { realm = \"r\", htpasswd = \"" +
        htpasswd + "\" }\n");
    uint16_t metrics = metrics_port(portico);
    // "ann:secret" and "ann:wrong", base64.
    CHECK(fetch(portico.port(), "/", "Authorization: Basic YW5uOnNlY3JldA==\r\n")->status == 200);
    CHECK(fetch(portico.port(), "/", "Authorization: Basic YW5uOndyb25n\r\n")->status == 401);
    CHECK(fetch(portico.port(), "/")->status == 401);
    std::string series = "portico_access_denied_total{location=\"private\",reason=\"auth\"}";
    std::string text = scrape_when(metrics, series, 2);
    CHECK(sample(text, series) == 2);
}

}  // namespace access_rules_test
