// alias, expires and try_files on the real binary, over HTTP/1.1 and HTTP/2
// (h2c): real files in a temp folder, real requests, and the paths that
// must never be served (an alias left through "/data../", a try_files
// entry made of what the client sent).
#include <catch2/catch.hpp>

#include <time.h>

#include <filesystem>
#include <map>
#include <string>

#include "harness.hpp"
#include "http2_support.hpp"
#include "static_site.hpp"
#include "upstream_server.hpp"

using namespace portico::test;

// Its own namespace: in a unity build the test files share one translation
// unit, and their helpers (Answer, fake_path...) must not meet.
namespace static_rules_test {

namespace {

namespace fs = std::filesystem;

enum class Protocol { http1, http2 };

// One response, whichever protocol carried it; header names lowercase.
struct Answer {
    int status = 0;
    std::map<std::string, std::string> headers;
    std::string body;
    std::string header(const std::string& name) const {
        auto found = headers.find(name);
        return found == headers.end() ? "" : found->second;
    }
};

Answer ask(Protocol protocol, uint16_t port, const std::string& target,
           const std::map<std::string, std::string>& request_headers = {}) {
    Answer answer;
    if (protocol == Protocol::http1) {
        std::string extra;
        for (const auto& [name, value] : request_headers) extra += name + ": " + value + "\r\n";
        Client client(port);
        client.send("GET " + target + " HTTP/1.1\r\nHost: a.test\r\n" + extra + "\r\n");
        std::optional<Response> response = client.read_response();
        REQUIRE(response);
        answer.status = response->status;
        answer.headers = response->headers;
        answer.body = response->body;
        return answer;
    }
    h2::Client client(port);
    h2::Fields fields(request_headers.begin(), request_headers.end());
    uint32_t id = client.get(target, fields);
    INFO(client.trace());
    REQUIRE(client.wait_stream(id));
    const h2::StreamResult& result = client.result(id);
    answer.status = result.status;
    for (const auto& [name, value] : result.headers) answer.headers.emplace(name, value);
    answer.body = result.body;
    return answer;
}

std::string protocol_name(Protocol protocol) {
    return protocol == Protocol::http1 ? "HTTP/1.1" : "HTTP/2";
}

// [server] and h2c beside HTTP/1.1, then `locations`.
std::string config_with(const std::string& locations, const std::string& more = "") {
    return "[server]\nlisten = [\"{listen}\"]\nworkers = 1\n\n[http2]\ncleartext = true\n\n" +
           more + "\n" + locations;
}

time_t parse_http_date(const std::string& text) {
    struct tm parts {};
    const char* end = ::strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &parts);
    if (end == nullptr || *end != '\0') return -1;
    return ::timegm(&parts);
}

// Cache-Control and Expires as `expires` writes them: Expires is Date plus
// the lifetime (a second apart at most: Date is taken when the head goes out).
void check_expires(const Answer& answer, long lifetime, const std::string& cache_control) {
    CHECK(answer.header("cache-control") == cache_control);
    time_t date = parse_http_date(answer.header("date"));
    time_t expires = parse_http_date(answer.header("expires"));
    REQUIRE(date > 0);
    REQUIRE(expires > 0);
    CHECK(expires - date >= lifetime - 1);
    CHECK(expires - date <= lifetime);
}

}  // namespace

TEST_CASE("alias: the matched prefix is replaced by the folder, and no path leaves it",
          "[static-rules]") {
    Site site;
    site.dir.write(".next/static/chunks/app.js", "console.log(1)\n");
    site.dir.write(".next/static/sub/index.html", "<sub>\n");
    site.dir.write(".next/static/.env", "SECRET=1\n");
    site.dir.write("data/x.txt", "inside\n");
    site.dir.write("data/index.html", "<data index>\n");
    site.dir.write("data../secret.txt", "outside\n");
    site.dir.write("datax", "outside too\n");
    site.dir.write("secret.txt", "outside the alias\n");
    // What "/datax" would wrongly map to if the rest were taken as a name
    // inside the folder.
    site.dir.write("data/x", "outside: a wrong mapping\n");
    site.dir.write("icons/fav.ico", "ICO");
    site.dir.write("manual/intro.html", "<intro>\n");
    site.write("index.html", "<root>\n");
    // Relative to the config's folder, like every path: Portico writes its
    // config in a temp folder beside the site's.
    std::string relative = "../" + fs::path(site.dir.path()).filename().string();
    Portico portico(config_with("[[location]]\nprefix = \"/_next/static/\"\nalias = \"" + relative +
                                "/.next/static/\"\nexpires = \"365d\"\n\n"
                                "[[location]]\nprefix = \"/data\"\nalias = \"" +
                                site.dir.path() +
                                "/data\"\n\n"
                                "[[location]]\nexact = \"/favicon.ico\"\nalias = \"" +
                                site.dir.path() +
                                "/icons/fav.ico\"\n\n"
                                "[[location]]\nprefix = \"/docs/\"\nalias = \"" +
                                site.dir.path() +
                                "/manual\"\ntry_files = [\"$uri\", \"$uri.html\", \"=404\"]\n\n"
                                "[[location]]\nprefix = \"/\"\nroot = \"" +
                                site.root() + "\"\n"));
    auto protocol = GENERATE(Protocol::http1, Protocol::http2);
    INFO(protocol_name(protocol));
    uint16_t port = portico.port();

    Answer app = ask(protocol, port, "/_next/static/chunks/app.js");
    CHECK(app.status == 200);
    CHECK(app.body == "console.log(1)\n");
    CHECK(app.header("content-type") == "text/javascript; charset=utf-8");
    check_expires(app, 365 * 86400, "max-age=31536000");

    Answer sub = ask(protocol, port, "/_next/static/sub/");
    CHECK(sub.status == 200);
    CHECK(sub.body == "<sub>\n");
    Answer sub_redirect = ask(protocol, port, "/_next/static/sub?v=2");
    CHECK(sub_redirect.status == 301);
    CHECK(sub_redirect.header("location") == "/_next/static/sub/?v=2");
    check_expires(sub_redirect, 365 * 86400, "max-age=31536000");

    Answer missing = ask(protocol, port, "/_next/static/missing.js");
    CHECK(missing.status == 404);
    CHECK(missing.header("expires").empty());
    CHECK(missing.header("cache-control").empty());
    // Dot files are judged on the part inside the folder (the alias's own
    // ".next" is the operator's choice).
    CHECK(ask(protocol, port, "/_next/static/.env").status == 404);

    Answer inside = ask(protocol, port, "/data/x.txt");
    CHECK(inside.status == 200);
    CHECK(inside.body == "inside\n");
    CHECK(inside.header("expires").empty());
    Answer folder = ask(protocol, port, "/data");
    CHECK(folder.status == 301);
    CHECK(folder.header("location") == "/data/");
    CHECK(ask(protocol, port, "/data/").body == "<data index>\n");
    // nginx would read /SITE/data../secret.txt and /SITE/datax here.
    for (const char* outside : {"/data../secret.txt", "/datax", "/data%2e%2e/secret.txt"}) {
        INFO(outside);
        Answer refused = ask(protocol, port, outside);
        CHECK(refused.status == 404);
        CHECK(refused.body.find("outside") == std::string::npos);
    }

    Answer icon = ask(protocol, port, "/favicon.ico");
    CHECK(icon.status == 200);
    CHECK(icon.body == "ICO");
    CHECK(icon.header("content-type") == "image/x-icon");

    // try_files entries map through the alias too.
    Answer intro = ask(protocol, port, "/docs/intro");
    CHECK(intro.status == 200);
    CHECK(intro.body == "<intro>\n");
    CHECK(ask(protocol, port, "/docs/missing").status == 404);

    // The server still serves, and root locations as before.
    Answer root = ask(protocol, port, "/index.html");
    CHECK(root.status == 200);
    CHECK(root.body == "<root>\n");
}

TEST_CASE("expires: Cache-Control max-age and Expires on successful static responses only",
          "[static-rules]") {
    Site site;
    site.write("a.txt", "0123456789");
    site.write("b.txt", "bee\n");
    Portico portico(config_with("[[location]]\nprefix = \"/\"\nroot = \"" + site.root() +
                                "\"\nexpires = \"1h\"\ncache_control = \"public\"\n\n"
                                "[[location]]\nexact = \"/b.txt\"\nroot = \"" +
                                site.root() +
                                "\"\nexpires = \"30m\"\n\n"
                                "[[location]]\nexact = \"/off.txt\"\nroot = \"" +
                                site.root() +
                                "\"\nexpires = \"off\"\ncache_control = \"no-cache\"\n"));
    auto protocol = GENERATE(Protocol::http1, Protocol::http2);
    INFO(protocol_name(protocol));
    uint16_t port = portico.port();

    // nginx sends expires' Cache-Control and add_header's as two lines;
    // one line holding both means the same (RFC 9110 5.3).
    Answer whole = ask(protocol, port, "/a.txt");
    CHECK(whole.status == 200);
    check_expires(whole, 3600, "max-age=3600, public");

    Answer not_modified = ask(protocol, port, "/a.txt", {{"if-none-match", whole.header("etag")}});
    CHECK(not_modified.status == 304);
    check_expires(not_modified, 3600, "max-age=3600, public");

    Answer partial = ask(protocol, port, "/a.txt", {{"range", "bytes=2-4"}});
    CHECK(partial.status == 206);
    CHECK(partial.body == "234");
    check_expires(partial, 3600, "max-age=3600, public");

    for (const char* failing : {"/missing.txt"}) {
        Answer missing = ask(protocol, port, failing);
        CHECK(missing.status == 404);
        CHECK(missing.header("expires").empty());
        CHECK(missing.header("cache-control").empty());
    }
    Answer unsatisfiable = ask(protocol, port, "/a.txt", {{"range", "bytes=50-60"}});
    CHECK(unsatisfiable.status == 416);
    CHECK(unsatisfiable.header("expires").empty());

    Answer minutes = ask(protocol, port, "/b.txt");
    CHECK(minutes.status == 200);
    check_expires(minutes, 1800, "max-age=1800");

    // "off": as if unset, cache_control alone.
    site.write("off.txt", "off\n");
    Answer off = ask(protocol, port, "/off.txt");
    CHECK(off.status == 200);
    CHECK(off.header("cache-control") == "no-cache");
    CHECK(off.header("expires").empty());
}

TEST_CASE("try_files: the single-page app's fallback, pages without .html, directories, =CODE",
          "[static-rules]") {
    Site site;
    site.write("index.html", "<app>\n");
    site.write("about.html", "<about>\n");
    site.write("app.js", "js\n");
    site.write("docs/index.html", "<docs>\n");
    site.write("assets/x.js", "x\n");
    site.write(".secret.html", "hidden\n");
    std::string root = "root = \"" + site.root() + "\"\n";
    Portico portico(
        config_with("[[location]]\nprefix = \"/\"\n" + root +
                    "try_files = [\"$uri\", \"$uri.html\", \"$uri/\", \"/index.html\"]\n\n"
                    "[[location]]\nprefix = \"/assets/\"\n" +
                    root +
                    "try_files = [\"$uri\", \"=404\"]\n\n"
                    "[[location]]\nprefix = \"/gone/\"\n" +
                    root +
                    "try_files = [\"$uri\", \"=410\"]\n\n"
                    "[[location]]\nprefix = \"/who/\"\n" +
                    root + "try_files = [\"/$http_x_page\", \"=404\"]\n"));
    auto protocol = GENERATE(Protocol::http1, Protocol::http2);
    INFO(protocol_name(protocol));
    uint16_t port = portico.port();

    // The classic SPA: a client-side route gets the app, with 200.
    for (const char* route : {"/app/route", "/app/route?tab=2", "/missing.js"}) {
        INFO(route);
        Answer app = ask(protocol, port, route);
        CHECK(app.status == 200);
        CHECK(app.body == "<app>\n");
        CHECK(app.header("content-type") == "text/html; charset=utf-8");
    }
    CHECK(ask(protocol, port, "/app.js").body == "js\n");
    Answer about = ask(protocol, port, "/about");
    CHECK(about.status == 200);
    CHECK(about.body == "<about>\n");
    CHECK(about.header("content-type") == "text/html; charset=utf-8");
    CHECK(ask(protocol, port, "/").body == "<app>\n");

    // "$uri/" for a directory asked without its slash: first the redirect
    // to it, as for any directory, then its index.
    Answer docs = ask(protocol, port, "/docs?a=1");
    CHECK(docs.status == 301);
    CHECK(docs.header("location") == "/docs/?a=1");
    Answer docs_index = ask(protocol, port, "/docs/");
    CHECK(docs_index.status == 200);
    CHECK(docs_index.body == "<docs>\n");

    // Dot files stay hidden: "$uri.html" does not make /.secret reachable.
    CHECK(ask(protocol, port, "/.secret").body == "<app>\n");

    CHECK(ask(protocol, port, "/assets/x.js").body == "x\n");
    Answer asset_missing = ask(protocol, port, "/assets/missing.js");
    CHECK(asset_missing.status == 404);
    CHECK(ask(protocol, port, "/gone/anything").status == 410);

    // An entry made of a request header is a file name, never a way out of
    // the folder.
    CHECK(ask(protocol, port, "/who/", {{"x-page", "about.html"}}).body == "<about>\n");
    for (const char* climbing :
         {"../www/about.html", "docs/../about.html", "/about.html", "./about.html"}) {
        INFO(climbing);
        CHECK(ask(protocol, port, "/who/", {{"x-page", climbing}}).status == 404);
    }
    // Without the header the entry is "/", a directory, and the entry as
    // written names a file (no trailing '/'): nothing, so =404 (nginx).
    CHECK(ask(protocol, port, "/who/").status == 404);
}

TEST_CASE("try_files: an entry names a directory only when written with a trailing slash",
          "[static-rules]") {
    // nginx decides from the entry as written: "$uri" for "/docs/" names no
    // file (the folder is not one), "$uri/" names the folder.
    Site site;
    site.write("index.html", "<app>\n");
    site.write("docs/index.html", "<docs>\n");
    std::string root = "root = \"" + site.root() + "\"\n";
    Portico portico(config_with("[[location]]\nprefix = \"/\"\n" + root +
                                "try_files = [\"$uri\", \"/index.html\"]\n\n"
                                "[[location]]\nprefix = \"/docs/\"\n" +
                                root + "try_files = [\"$uri\", \"$uri/\", \"=404\"]\n"));
    auto protocol = GENERATE(Protocol::http1, Protocol::http2);
    INFO(protocol_name(protocol));
    uint16_t port = portico.port();
    // The folder is no file: the fallback answers.
    CHECK(ask(protocol, port, "/").body == "<app>\n");
    // "$uri/" for "/docs/" is "/docs//": the folder, with its index.
    Answer docs = ask(protocol, port, "/docs/");
    CHECK(docs.status == 200);
    CHECK(docs.body == "<docs>\n");
    CHECK(ask(protocol, port, "/docs/missing").status == 404);
}

TEST_CASE(
    "try_files: a fallback that leads back to itself ends in 500 after 10 reroutes, "
    "logged once",
    "[static-rules]") {
    Site site;
    site.write("index.html", "<app>\n");
    Portico portico(config_with("[[location]]\nprefix = \"/x\"\nroot = \"" + site.root() +
                                "\"\ntry_files = [\"$uri\", \"/x\"]\n\n"
                                "[[location]]\nprefix = \"/\"\nroot = \"" +
                                site.root() + "\"\n"));
    auto protocol = GENERATE(Protocol::http1, Protocol::http2);
    INFO(protocol_name(protocol));
    std::string before = portico.log();
    Answer loop = ask(protocol, portico.port(), "/x");
    CHECK(loop.status == 500);
    REQUIRE(portico.wait_for_log("rerouted more than 10 times"));
    std::string added = portico.log().substr(before.size());
    size_t lines = 0;
    for (size_t at = added.find("rerouted more than"); at != std::string::npos;
         at = added.find("rerouted more than", at + 1))
        ++lines;
    CHECK(lines == 1);
    // The next request is served.
    CHECK(ask(protocol, portico.port(), "/index.html").body == "<app>\n");
}

TEST_CASE("try_files: @UPSTREAM answers what no file does, with the original target",
          "[static-rules]") {
    Site site;
    site.write("api/present.txt", "file\n");
    site.write("svc/real.txt", "real file\n");
    UpstreamServer upstream;
    std::string root = "root = \"" + site.root() + "\"\n";
    Portico portico(config_with("[[location]]\nprefix = \"/api/\"\n" + root +
                                    "try_files = [\"$uri\", \"@app\"]\n\n"
                                    "[[location]]\nprefix = \"/svc/\"\n" +
                                    root + "try_files = [\"/maintenance.html\", \"@app\"]\n",
                                "[upstream.app]\nservers = [\"" + upstream.address() + "\"]\n"));
    auto protocol = GENERATE(Protocol::http1, Protocol::http2);
    INFO(protocol_name(protocol));
    uint16_t port = portico.port();

    Answer file = ask(protocol, port, "/api/present.txt");
    CHECK(file.status == 200);
    CHECK(file.body == "file\n");
    Answer proxied = ask(protocol, port, "/api/users?id=7");
    CHECK(proxied.status == 200);
    CHECK(proxied.body == "ok /api/users?id=7");
    CHECK(upstream.last_request().target == "/api/users?id=7");

    // The upstream answers even where the path names a file: none of
    // try_files' own entries exists.
    Answer skipped = ask(protocol, port, "/svc/real.txt");
    CHECK(skipped.body == "ok /svc/real.txt");
    site.write("maintenance.html", "<down>\n");
    Answer maintenance = ask(protocol, port, "/svc/real.txt");
    CHECK(maintenance.status == 200);
    CHECK(maintenance.body == "<down>\n");
    fs::remove(site.path("maintenance.html"));
}

TEST_CASE("try_files: @UPSTREAM sends the location's proxy options (nginx's named location)",
          "[static-rules]") {
    Site site;
    site.write("present.txt", "file\n");
    UpstreamServer upstream;
    Portico portico(
        config_with("[[location]]\nprefix = \"/\"\nroot = \"" + site.root() +
                        "\"\ntry_files = [\"$uri\", \"@app\"]\npreserve_host = false\n"
                        "proxy_headers = { \"X-Forwarded-Proto\" = \"\", \"X-From\" = \"$uri\" }\n"
                        "hide_headers = [\"X-Powered-By\"]\n",
                    "[upstream.app]\nservers = [\"" + upstream.address() + "\"]\n"));
    upstream.set_behaviour([](const ReceivedRequest&) {
        return Reply::text(200, "app", "X-Powered-By: Express\r\n");
    });
    auto protocol = GENERATE(Protocol::http1, Protocol::http2);
    INFO(protocol_name(protocol));
    uint16_t port = portico.port();
    CHECK(ask(protocol, port, "/present.txt").body == "file\n");
    Answer proxied = ask(protocol, port, "/page");
    CHECK(proxied.body == "app");
    CHECK(proxied.header("x-powered-by").empty());
    ReceivedRequest received = upstream.last_request();
    // preserve_host = false: the upstream's name, not the client's a.test.
    CHECK(received.header("host") == "app");
    CHECK(received.header("x-from") == "/page");
    CHECK(received.header("x-forwarded-proto").empty());
}

}  // namespace static_rules_test
