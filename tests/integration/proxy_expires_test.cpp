// `expires` on proxied responses, over HTTP/1.1 and HTTP/2 against a real
// upstream that sends its own Cache-Control and Expires: nginx's expires
// replaces them on the statuses it applies to and leaves the others alone.
#include <catch2/catch.hpp>

#include <time.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "http2_support.hpp"
#include "proxy_support.hpp"
#include "static_site.hpp"
#include "upstream_server.hpp"

using namespace portico::test;

// Its own namespace: in a unity build the test files share one translation
// unit, and their helpers (Answer, fake_path...) must not meet.
namespace proxy_expires_test {

namespace {

enum class Protocol { http1, http2 };

// Every header line of a response (names lowercase), repeats kept: a
// replaced header must not go out beside portico's.
struct Answer {
    int status = 0;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
    std::vector<std::string> all(const std::string& name) const {
        std::vector<std::string> values;
        for (const auto& [field, value] : headers)
            if (field == name) values.push_back(value);
        return values;
    }
    std::string header(const std::string& name) const {
        std::vector<std::string> values = all(name);
        return values.size() == 1 ? values[0] : "";
    }
};

std::string lowercase(std::string text) {
    for (char& c : text) c = static_cast<char>(::tolower(static_cast<unsigned char>(c)));
    return text;
}

std::optional<Answer> get(Protocol protocol, uint16_t port, const std::string& target) {
    Answer answer;
    if (protocol == Protocol::http1) {
        auto response = proxy_fetch(port, get_request(target));
        if (!response) return std::nullopt;
        answer.status = response->status;
        answer.body = response->body;
        // The head's lines after the status line, each "Name: value".
        size_t at = response->head.find("\r\n");
        while (at != std::string::npos && at + 2 < response->head.size()) {
            size_t end = response->head.find("\r\n", at + 2);
            std::string line = response->head.substr(at + 2, end - at - 2);
            size_t colon = line.find(':');
            if (colon != std::string::npos)
                answer.headers.emplace_back(lowercase(line.substr(0, colon)),
                                            line.substr(line.find_first_not_of(' ', colon + 1)));
            at = end;
        }
        return answer;
    }
    h2::Client client(port);
    uint32_t id = client.get(target);
    if (!client.wait_stream(id)) return std::nullopt;
    const h2::StreamResult& result = client.result(id);
    answer.status = result.status;
    answer.headers = result.headers;
    answer.body = result.body;
    return answer;
}

std::string protocol_name(Protocol protocol) {
    return protocol == Protocol::http1 ? "HTTP/1.1" : "HTTP/2";
}

time_t parse_http_date(const std::string& text) {
    struct tm parts {};
    const char* end = ::strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &parts);
    if (end == nullptr || *end != '\0') return -1;
    return ::timegm(&parts);
}

// portico's Cache-Control and Expires (Date + lifetime), each once.
void check_expires(const Answer& answer, long lifetime, const std::string& cache_control = "") {
    std::string expected = "max-age=" + std::to_string(lifetime);
    if (!cache_control.empty()) expected += ", " + cache_control;
    CHECK(answer.all("cache-control") == std::vector<std::string>{expected});
    REQUIRE(answer.all("expires").size() == 1);
    time_t date = parse_http_date(answer.header("date"));
    time_t expires = parse_http_date(answer.header("expires"));
    REQUIRE(date > 0);
    REQUIRE(expires > 0);
    CHECK(expires - date >= lifetime - 1);
    CHECK(expires - date <= lifetime);
}

constexpr const char* upstream_expires = "Thu, 01 Jan 1970 00:00:00 GMT";

// The upstream's own, each once.
void check_upstream_headers(const Answer& answer) {
    CHECK(answer.all("cache-control") == std::vector<std::string>{"no-store"});
    CHECK(answer.all("expires") == std::vector<std::string>{upstream_expires});
}

// /200, /404, /500: that status; /304: a 304 without a body. Each with the
// upstream's own Cache-Control and Expires.
Reply app_reply(const ReceivedRequest& request) {
    std::string own = std::string("Cache-Control: no-store\r\nExpires: ") + upstream_expires +
                      "\r\nX-App: yes\r\n";
    std::string path = request.target.substr(request.target.rfind('/'));
    if (path == "/304")
        return Reply::raw("HTTP/1.1 304 Not Modified\r\nETag: \"v1\"\r\n" + own + "\r\n",
                          Reply::Then::keep_alive);
    int status = path == "/404" ? 404 : path == "/500" ? 500 : 200;
    return Reply::text(status, "app " + request.target, own);
}

std::string config_with(const std::string& locations) {
    return "[server]\nlisten = [\"{listen}\"]\nworkers = 1\n\n[http2]\ncleartext = true\n\n" +
           locations;
}

}  // namespace

TEST_CASE("expires replaces the upstream's Cache-Control and Expires on the statuses it applies to",
          "[proxy-expires]") {
    UpstreamServer upstream(app_reply);
    std::string proxy = "proxy = \"http://" + upstream.address() + "\"\n";
    Portico portico(config_with("[[location]]\nprefix = \"/cached/\"\n" + proxy +
                                "expires = \"1h\"\n"
                                "[[location]]\nprefix = \"/off/\"\n" +
                                proxy +
                                "expires = \"off\"\n"
                                "[[location]]\nprefix = \"/\"\n" +
                                proxy));
    for (Protocol protocol : {Protocol::http1, Protocol::http2}) {
        INFO(protocol_name(protocol));
        for (const char* target : {"/cached/200", "/cached/304"}) {
            INFO(target);
            auto answer = get(protocol, portico.port(), target);
            REQUIRE(answer);
            CHECK(answer->status == (std::string(target).ends_with("304") ? 304 : 200));
            CHECK(answer->header("x-app") == "yes");
            check_expires(*answer, 3600);
        }
        CHECK(get(protocol, portico.port(), "/cached/304")->header("etag") == "\"v1\"");
        // nginx's expires leaves an error alone: the upstream's own go through.
        for (const char* target : {"/cached/404", "/cached/500"}) {
            INFO(target);
            auto answer = get(protocol, portico.port(), target);
            REQUIRE(answer);
            CHECK(answer->status == (std::string(target).ends_with("404") ? 404 : 500));
            CHECK(answer->body == std::string("app ") + target);
            check_upstream_headers(*answer);
        }
        // Without expires, or with "off": the upstream's, whatever the status.
        for (const char* target : {"/off/200", "/other/200", "/other/304"}) {
            INFO(target);
            auto answer = get(protocol, portico.port(), target);
            REQUIRE(answer);
            check_upstream_headers(*answer);
        }
    }
}

TEST_CASE(
    "expires on a root and proxy location: the file and the application's answer both carry it",
    "[proxy-expires]") {
    // cache_control is the files' own: a location's "public" never reaches
    // the application's pages, which may be a user's.
    UpstreamServer upstream(app_reply);
    Site site;
    site.write("page.html", "<file>\n");
    Portico portico(config_with("[[location]]\nprefix = \"/\"\nroot = '" + site.root() +
                                "'\nproxy = \"http://" + upstream.address() +
                                "\"\nexpires = \"90s\"\ncache_control = \"public\"\n"));
    for (Protocol protocol : {Protocol::http1, Protocol::http2}) {
        INFO(protocol_name(protocol));
        auto file = get(protocol, portico.port(), "/page.html");
        REQUIRE(file);
        CHECK(file->status == 200);
        CHECK(file->body == "<file>\n");
        check_expires(*file, 90, "public");
        auto app = get(protocol, portico.port(), "/app/200");
        REQUIRE(app);
        CHECK(app->status == 200);
        CHECK(app->body == "app /app/200");
        check_expires(*app, 90);
        auto missing = get(protocol, portico.port(), "/app/404");
        REQUIRE(missing);
        CHECK(missing->status == 404);
        check_upstream_headers(*missing);
    }
}

}  // namespace proxy_expires_test
