// The proxy's rules as the loader reads them: proxy URLs with a path,
// proxy_headers, hide_headers, templated headers and headers_always, and
// upstreams on Unix sockets; each wrong value at its line and column.
#include <sys/un.h>

#include <catch2/catch.hpp>

#include "broken_configs.hpp"
#include "config/config.hpp"

using namespace portico::config;
using portico::test::BrokenConfig;

// Its own namespace: in a unity build the test files share one translation
// unit, and their helpers (Answer, fake_path...) must not meet.
namespace config_proxy_rules_test {

namespace {

constexpr const char* fake_path = "/nonexistent-portico-conf/portico.toml";

// A [server], then `rest`.
std::string with_server(const std::string& rest) {
    return "[server]\nlisten = [\"127.0.0.1:0\"]\n" + rest;
}

LoadResult load(const std::string& rest) {
    return parse_config(with_server(rest), fake_path);
}

const BrokenConfig broken_proxy_rules[] = {
    {"a path in the proxy URL of an exact location",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n[[location]]\nexact = \"/a\"\n"
     "proxy = \"http://127.0.0.1:3000/\"\n",
     "5:9",
     "location '/a': proxy: a path in the URL replaces the matched prefix: only a prefix "
     "location may have one; write \"http://host:port\" without '/'"},
    {"a query in the proxy URL",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n[[location]]\nprefix = \"/\"\n"
     "proxy = \"http://127.0.0.1:3000/v1?x=1\"\n",
     "5:9", "a query or fragment in the URL is not supported"},
    {"a fragment in the proxy URL",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n[[location]]\nprefix = \"/\"\n"
     "proxy = \"http://127.0.0.1:3000#top\"\n",
     "5:9", "a query or fragment in the URL is not supported"},
    {"userinfo in the proxy URL",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n[[location]]\nprefix = \"/\"\n"
     "proxy = \"http://user:pw@127.0.0.1:3000/\"\n",
     "5:9", "user information in the URL is not supported"},
    {"a proxy URL without a host",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n[[location]]\nprefix = \"/\"\n"
     "proxy = \"http:///v1/\"\n",
     "5:9", "expected \"http://host:port\" or \"http://host:port/path/\""},
    {"a proxy path with a space",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n[[location]]\nprefix = \"/\"\n"
     "proxy = \"http://127.0.0.1:3000/a b/\"\n",
     "5:9", "the path '/a b/' has characters that must be percent-encoded"},
    {"nginx's inline Unix socket URL",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n[[location]]\nprefix = \"/\"\n"
     "proxy = \"http://unix:/run/app.sock:/\"\n",
     "5:9", "location '/': proxy: \"http://unix:/run/app.sock:/\""},
    {"proxy_headers not a table",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n[[location]]\nprefix = \"/\"\n"
     "proxy = \"http://127.0.0.1:3000\"\nproxy_headers = [\"X-A\"]\n",
     "6:17", "location '/': proxy_headers: expected a table like"},
    {"proxy_headers with a name that is not a token",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n[[location]]\nprefix = \"/\"\n"
     "proxy = \"http://127.0.0.1:3000\"\nproxy_headers = { \"X A\" = \"1\" }\n",
     "6:19", "location '/': proxy_headers.X A: not a valid header name"},
    {"proxy_headers sets Content-Length",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n[[location]]\nprefix = \"/\"\n"
     "proxy = \"http://127.0.0.1:3000\"\nproxy_headers = { Content-Length = \"1\" }\n",
     "6:19", "proxy_headers.Content-Length: the request's framing and connection are portico's"},
    {"proxy_headers sets Transfer-Encoding",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n[[location]]\nprefix = \"/\"\n"
     "proxy = \"http://127.0.0.1:3000\"\nproxy_headers = { transfer-encoding = \"chunked\" }\n",
     "6:19", "proxy_headers.transfer-encoding: the request's framing and connection are portico's"},
    {"proxy_headers sets Connection (nginx's WebSocket recipe)",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n[[location]]\nprefix = \"/\"\n"
     "proxy = \"http://127.0.0.1:3000\"\nproxy_headers = { Connection = \"upgrade\" }\n",
     "6:19", "(a WebSocket handshake goes through with websocket = true)"},
    {"proxy_headers sets Upgrade",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n[[location]]\nprefix = \"/\"\n"
     "proxy = \"http://127.0.0.1:3000\"\nproxy_headers = { Upgrade = \"$http_upgrade\" }\n",
     "6:19", "proxy_headers.Upgrade: portico forwards a WebSocket handshake's Upgrade itself"},
    {"proxy_headers names a header twice",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n[[location]]\nprefix = \"/\"\n"
     "proxy = \"http://127.0.0.1:3000\"\nproxy_headers = { X-A = \"1\", x-a = \"2\" }\n",
     "6:30", "proxy_headers.x-a: the same header is already set (case is ignored)"},
    {"proxy_headers value not a string",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n[[location]]\nprefix = \"/\"\n"
     "proxy = \"http://127.0.0.1:3000\"\nproxy_headers = { X-A = 1 }\n",
     "6:25", "proxy_headers.X-A: expected a string without line breaks, got 1"},
    {"proxy_headers value with a line break",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n[[location]]\nprefix = \"/\"\n"
     "proxy = \"http://127.0.0.1:3000\"\nproxy_headers = { X-A = \"a\\r\\nX-B: b\" }\n",
     "6:25", "proxy_headers.X-A: expected a string without line breaks"},
    {"proxy_headers with an unknown variable, at its column",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n[[location]]\nprefix = \"/\"\n"
     "proxy = \"http://127.0.0.1:3000\"\nproxy_headers = { X-Port = \"p=$server_prot\" }\n",
     "6:31", "proxy_headers.X-Port: unknown variable"},
    {"proxy_headers with a capture in a prefix location",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n[[location]]\nprefix = \"/\"\n"
     "proxy = \"http://127.0.0.1:3000\"\nproxy_headers = { X-Id = \"$1\" }\n",
     "6:27", "proxy_headers.X-Id: '$1': no regex with groups applies here"},
    {"proxy_headers with a capture the regex does not have",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n[[location]]\nregex = \"^/u/([0-9]+)$\"\n"
     "proxy = \"http://127.0.0.1:3000\"\nproxy_headers = { X-Id = \"$2\" }\n",
     "6:27", "proxy_headers.X-Id: '$2': the regex has only 1 group(s)"},
    {"proxy_headers without proxy",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n[[location]]\nprefix = \"/\"\n"
     "respond = { status = 204 }\nproxy_headers = { X-A = \"1\" }\n",
     "6:17", "location '/': proxy_headers: applies only to a location with proxy"},
    {"hide_headers not an array",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n[[location]]\nprefix = \"/\"\n"
     "proxy = \"http://127.0.0.1:3000\"\nhide_headers = \"X-Powered-By\"\n",
     "6:16", "location '/': hide_headers"},
    {"hide_headers with a name that is not a token",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n[[location]]\nprefix = \"/\"\n"
     "proxy = \"http://127.0.0.1:3000\"\nhide_headers = [\"X Powered\"]\n",
     "6:16", "location '/': hide_headers: 'X Powered' is not a valid header name"},
    {"hide_headers names the framing",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n[[location]]\nprefix = \"/\"\n"
     "proxy = \"http://127.0.0.1:3000\"\nhide_headers = [\"Content-Length\"]\n",
     "6:16", "'Content-Length' is framing, which portico writes itself"},
    {"hide_headers without proxy",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n[[location]]\nprefix = \"/\"\n"
     "respond = { status = 204 }\nhide_headers = [\"X-A\"]\n",
     "6:16", "location '/': hide_headers: applies only to a location with proxy"},
    {"headers with an unknown variable, at its column",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n[[location]]\nprefix = \"/\"\n"
     "respond = { status = 204 }\nheaders = { X-Id = \"id $reqest_id\" }\n",
     "6:24", "location '/': headers.X-Id: unknown variable"},
    {"headers_always without headers",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n[[location]]\nprefix = \"/\"\n"
     "respond = { status = 204 }\nheaders_always = true\n",
     "6:18", "location '/': headers_always: applies only to a location with headers"},
    {"headers_always not a boolean",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n[[location]]\nprefix = \"/\"\n"
     "respond = { status = 204 }\nheaders = { X-A = \"1\" }\nheaders_always = \"yes\"\n",
     "7:18", "location '/': headers_always: expected true or false"},
    {"a Unix socket path longer than sockaddr_un holds",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n[upstream.app]\n"
     "servers = [\"unix:/run/"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaa.sock\"]\n",
     "4:12", "a Unix socket path has 1 to 107 bytes, this one 117"},
    {"a Unix socket without a path",
     "[server]\nlisten = [\"127.0.0.1:0\"]\n[upstream.app]\nservers = [\"unix:\"]\n", "4:12",
     "upstream.app.servers: \"unix:\": expected \"unix:/path/to/app.sock\""},
    {"a Unix socket as a listener", "[server]\nlisten = [\"unix:/run/portico.sock\"]\n", "2:11",
     "server.listen: \"unix:/run/portico.sock\""},
};

}  // namespace

TEST_CASE("each broken proxy rule is reported at its line and column", "[config]") {
    portico::test::check_broken_configs(broken_proxy_rules, fake_path);
}

TEST_CASE("a path in a proxy URL is the prefix's replacement", "[config]") {
    LoadResult result = load(
        "[[location]]\nprefix = \"/api/\"\nproxy = \"http://127.0.0.1:3000/v1/\"\n"
        "[[location]]\nprefix = \"/old\"\nproxy = \"http://127.0.0.1:3000/\"\n"
        "[[location]]\nprefix = \"/same/\"\nproxy = \"http://127.0.0.1:3000/same/\"\n"
        "[[location]]\nregex = \"^/r\"\nproxy = \"http://127.0.0.1:3000\"\n"
        "[[location]]\nprefix = \"/enc/\"\nproxy = \"http://127.0.0.1:3000/a%20b/\"\n");
    INFO(portico::test::all_messages(result));
    REQUIRE(result.config);
    const Config& config = *result.config;
    CHECK(config.locations[0].proxy_path == "/v1/");
    CHECK(config.locations[1].proxy_path == "/");  // nginx's proxy_pass http://b/;
    // Replaced by itself: nothing to do, the target goes as received.
    CHECK(config.locations[2].proxy_path.empty());
    CHECK(config.locations[3].proxy_path.empty());
    CHECK(config.locations[4].proxy_path == "/a%20b/");
    // One inline upstream for the server, whatever the paths.
    REQUIRE(config.upstreams.size() == 1);
    CHECK(config.upstreams[0].name == "http://127.0.0.1:3000");
    for (const LocationConfig& location : config.locations) CHECK(location.upstream == 0u);
}

TEST_CASE("proxy_headers and headers are templates, hide_headers lowercase", "[config]") {
    LoadResult result = load(
        "[[location]]\nregex = '^/u/(?P<user>[a-z]+)/([0-9]+)$'\n"
        "proxy = \"http://127.0.0.1:3000\"\n"
        "proxy_headers = { X-Forwarded-Port = \"$server_port\", Accept-Encoding = \"\", "
        "X-User = \"$user-$2\" }\n"
        "hide_headers = [\"X-Powered-By\", \"server-timing\"]\n"
        "headers = { X-Req = \"$request_id\", X-Frame-Options = \"DENY\" }\n"
        "headers_always = true\n");
    INFO(portico::test::all_messages(result));
    REQUIRE(result.config);
    const LocationConfig& location = result.config->locations[0];
    REQUIRE(location.proxy_headers.size() == 3);
    CHECK(location.proxy_headers[0].name == "X-Forwarded-Port");
    CHECK(location.proxy_headers[0].value.uses(Variable::server_port));
    CHECK(location.proxy_headers[1].name == "Accept-Encoding");
    CHECK(location.proxy_headers[1].value.source.empty());
    CHECK(location.proxy_headers[2].value.uses(Variable::capture));
    CHECK(location.hide_headers == std::vector<std::string>{"x-powered-by", "server-timing"});
    REQUIRE(location.headers.size() == 2);
    CHECK(location.headers[0].value.uses(Variable::request_id));
    CHECK(location.headers[1].value.is_literal());
    CHECK(location.headers_always);
}

TEST_CASE("a unix: server is a Unix socket, relative to the config's folder", "[config]") {
    LoadResult result = parse_config(
        with_server("[upstream.app]\nservers = [\"unix:/run/app.sock\", \"unix:sockets/b.sock\", "
                    "\"127.0.0.1:3000\"]\n"),
        "/etc/portico/portico.toml");
    INFO(portico::test::all_messages(result));
    REQUIRE(result.config);
    const std::vector<SocketAddress>& servers = result.config->upstreams[0].servers;
    REQUIRE(servers.size() == 3);
    CHECK(servers[0].text == "unix:/run/app.sock");
    CHECK(servers[1].text == "unix:/etc/portico/sockets/b.sock");
    const auto& un = reinterpret_cast<const sockaddr_un&>(servers[1].storage);
    CHECK(un.sun_family == AF_UNIX);
    CHECK(std::string(un.sun_path) == "/etc/portico/sockets/b.sock");
    CHECK(servers[1].length == offsetof(sockaddr_un, sun_path) + servers[1].text.size() - 5 + 1);
    CHECK_FALSE(servers[1].resolved_by_workers());
    CHECK(servers[2].storage.ss_family == AF_INET);
}

}  // namespace config_proxy_rules_test
