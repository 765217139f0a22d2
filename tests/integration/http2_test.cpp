// HTTP/2 against the real binary: h2c with prior knowledge on a cleartext
// listener ([http2] cleartext = true) beside HTTP/1.1, h2 by ALPN on a TLS
// listener, many streams on one connection, request bodies through the
// proxy with flow control, a client's small windows as back-pressure, the
// counters and the access log, and the drain on reload. Each stream is
// checked byte for byte; the frames come from our own frame-level client
// (http2_support.hpp), and curl and h2load (nghttp2-client) check that
// independent clients agree.
#include <catch2/catch.hpp>

#include <signal.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "content_decoder.hpp"
#include "http2_support.hpp"
#include "metrics_support.hpp"
#include "static_site.hpp"
#include "tls_support.hpp"
#include "upstream_server.hpp"

using namespace portico::test;
using h2::Fields;

namespace {

using Clock = std::chrono::steady_clock;

// The upstream of these tests: a POST is answered with its body's size and
// digest (and its framing), /app/slow trickles, the rest "ok TARGET".
Reply digest_app(const ReceivedRequest& request) {
    if (request.method == "POST" || request.method == "PUT")
        return Reply::text(200, "got " + std::to_string(request.body.size()) + " " +
                                    sha256_hex(request.body) +
                                    (request.chunked ? " chunked" : " length"));
    if (request.target == "/app/slow")
        return Reply::chunked({"one,", "two,", "three,", "four,", "five"}, 600ms);
    if (request.target.rfind("/app/pattern/", 0) == 0)
        return Reply::pattern(std::stoull(request.target.substr(13)));
    return Reply::text(200, "ok " + request.target, "X-App: yes\r\nKeep-Alive: timeout=5\r\n");
}

// /app/ proxied to `upstream`, /static/ named "static", the rest from the site.
std::string locations(const Site& site, const std::string& upstream) {
    return "[upstream.app]\nservers = [\"" + upstream + "\"]\n\n"
           "[[location]]\nprefix = \"/app/\"\nproxy = \"app\"\n\n"
           "[[location]]\nname = \"static\"\nprefix = \"/\"\nroot = \"" + site.root() + "\"\n";
}

// A cleartext listener; `http2` is the [http2] table's body.
std::string cleartext_config(const Site& site, const std::string& upstream,
                             const std::string& http2 = "cleartext = true\n",
                             const std::string& server_options = "") {
    return "[server]\nlisten = [\"{listen}\"]\nworkers = 1\n" + server_options + "\n[http2]\n" +
           http2 + "\n" + locations(site, upstream);
}

// The metrics listener and an access log in the site's folder.
std::string observed(const std::string& config, const Site& site) {
    return config + "\n[metrics]\nlisten = \"127.0.0.1:0\"\n\n[log]\naccess = \"" + site.dir.path() +
           "/access.log\"\n";
}

int count_lines_with(const std::string& text, const std::string& needle) {
    std::istringstream lines(text);
    int count = 0;
    for (std::string line; std::getline(lines, line);)
        if (line.find(needle) != std::string::npos) ++count;
    return count;
}

// A small file, a file around a frame's size, and files larger than the
// default windows (64 KiB) and the server's output high water.
struct Files {
    std::string small = "a small file, kept in memory\n";
    std::string frame = random_bytes(16 * 1024 + 1, 11);
    std::string medium = random_bytes(100 * 1000 + 7, 12);
    std::string large = random_bytes((2u << 20) + 333, 13);
    void write(const Site& site) const {
        site.write("small.txt", small);
        site.write("frame.bin", frame);
        site.write("medium.bin", medium);
        site.write("large.bin", large);
    }
};

// The status, body and digest of a finished stream, for CHECKs.
void check_file(h2::Client& client, uint32_t id, const std::string& content) {
    INFO(client.trace());
    const h2::StreamResult& result = client.result(id);
    CHECK(result.ended);
    CHECK_FALSE(result.reset.has_value());
    CHECK(result.status == 200);
    CHECK(result.header("content-length") == std::to_string(content.size()));
    CHECK(result.body.size() == content.size());
    CHECK(sha256_hex(result.body) == sha256_hex(content));
}

}  // namespace

TEST_CASE("http2: h2c with prior knowledge: files, HEAD, 404, and HTTP/1.1 on the same port",
          "[http2]") {
    Site site;
    Files files;
    files.write(site);
    UpstreamServer upstream(digest_app);
    Portico portico(cleartext_config(site, upstream.address()));

    h2::Client client(portico.port());
    uint32_t small = client.get("/small.txt");
    REQUIRE(client.wait_stream(small));
    INFO(client.trace());
    // The server's SETTINGS: the configured stream limit (128 by default).
    REQUIRE(client.server_settings_received());
    CHECK(client.server_settings()[h2::SETTINGS_MAX_CONCURRENT_STREAMS] == 128);
    // RFC 9218 priorities, not RFC 7540's tree.
    CHECK(client.server_settings()[h2::SETTINGS_NO_RFC7540_PRIORITIES] == 1);
    check_file(client, small, files.small);
    CHECK(client.result(small).header("content-type").rfind("text/plain", 0) == 0);
    CHECK(client.result(small).header("server") == "portico");
    CHECK_FALSE(client.result(small).header("date").empty());
    // Connection-specific fields never appear in an HTTP/2 response (RFC 9113 8.2.2).
    for (const char* name : {"connection", "keep-alive", "transfer-encoding"})
        CHECK(client.result(small).header(name).empty());

    for (const auto* content : {&files.frame, &files.medium, &files.large}) {
        std::string name = content == &files.frame ? "/frame.bin"
                           : content == &files.medium ? "/medium.bin" : "/large.bin";
        INFO(name);
        uint32_t id = client.get(name);
        REQUIRE(client.wait_stream(id));
        check_file(client, id, *content);
    }

    // HEAD: the head of a GET, no DATA.
    uint32_t head = client.get("/large.bin", {}, "HEAD");
    REQUIRE(client.wait_stream(head));
    CHECK(client.result(head).status == 200);
    CHECK(client.result(head).header("content-length") == std::to_string(files.large.size()));
    CHECK(client.result(head).body.empty());
    CHECK(client.result(head).data_frames == 0);

    uint32_t missing = client.get("/missing.txt");
    REQUIRE(client.wait_stream(missing));
    CHECK(client.result(missing).status == 404);

    // A proxied request over h2c: X-Forwarded-Proto is http here.
    uint32_t proxied = client.get("/app/x?y=1");
    REQUIRE(client.wait_stream(proxied));
    CHECK(client.result(proxied).status == 200);
    CHECK(client.result(proxied).body == "ok /app/x?y=1");
    CHECK(upstream.last_request().header("x-forwarded-proto") == "http");
    CHECK(upstream.last_request().header("host") == "a.test");

    // HTTP/1.1 on the same port, on a new connection and kept alive.
    Client http1(portico.port());
    for (int round = 0; round < 2; ++round) {
        http1.send(get_request("/small.txt"));
        auto response = http1.read_response();
        REQUIRE(response);
        CHECK(response->status == 200);
        CHECK(response->body == files.small);
    }
    // A request whose method starts like the preface's does ("P...") is HTTP/1.1.
    http1.send("PUT /small.txt HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n");
    auto put = http1.read_response();
    REQUIRE(put);
    CHECK(put->status / 100 == 4);

    // The h2 connection is still there.
    uint32_t again = client.get("/medium.bin");
    REQUIRE(client.wait_stream(again));
    check_file(client, again, files.medium);
    CHECK_FALSE(client.goaway());
}

TEST_CASE("http2: with cleartext = false (the default) an h2c preface is not HTTP/2",
          "[http2]") {
    Site site;
    Files files;
    files.write(site);
    UpstreamServer upstream(digest_app);
    for (std::string http2 : {"", "cleartext = false\n"}) {
        INFO("[http2] " << http2);
        Portico portico(cleartext_config(site, upstream.address(), http2));
        Client raw(portico.port());
        raw.send(std::string(h2::client_magic) + h2::settings_frame({}));
        auto answer = raw.read_until_close(5s);
        // An HTTP/1.1 error (400-class) and a close, or a bare close; never
        // an HTTP/2 SETTINGS frame.
        REQUIRE(answer);
        INFO("answer: " << *answer);
        if (!answer->empty()) {
            CHECK(answer->rfind("HTTP/1.1 4", 0) == 0);
        }
        // HTTP/1.1 is served as ever.
        auto response = fetch(portico.port(), "/small.txt");
        REQUIRE(response);
        CHECK(response->status == 200);
        CHECK(response->body == files.small);
    }
}

TEST_CASE("http2: h2 by ALPN over TLS: files, a proxied request (X-Forwarded-Proto, Host from "
          ":authority), curl agrees",
          "[http2][tls]") {
    Certificates certs;
    Site site;
    Files files;
    files.write(site);
    UpstreamServer upstream(digest_app);
    Portico portico(tls_config({certs.entry("a")}, locations(site, upstream.address())));
    uint16_t port = tls_port(portico);

    h2::ClientOptions options;
    options.tls = true;
    h2::Client client(port, options);
    REQUIRE(client.connected());
    CHECK(client.alpn() == "h2");

    std::vector<std::pair<uint32_t, const std::string*>> sent;
    for (const auto& [path, content] : std::vector<std::pair<std::string, const std::string*>>{
             {"/small.txt", &files.small}, {"/frame.bin", &files.frame},
             {"/medium.bin", &files.medium}, {"/large.bin", &files.large}}) {
        uint32_t id = client.get(path);
        REQUIRE(client.wait_stream(id));
        INFO(path);
        check_file(client, id, *content);
    }

    // Proxied: the upstream gets HTTP/1.1 with Host from :authority, the
    // client's fields, the cookie crumbs joined (RFC 9113 8.2.3), and
    // X-Forwarded-Proto: https.
    uint32_t id = client.get("/app/hello?x=1",
                             {{"x-custom", "1"}, {"cookie", "a=1"}, {"cookie", "b=2"},
                              {"user-agent", "h2-test"}},
                             "GET", "www.a.test");
    REQUIRE(client.wait_stream(id));
    {
        INFO(client.trace());
        const h2::StreamResult& result = client.result(id);
        CHECK(result.status == 200);
        CHECK(result.body == "ok /app/hello?x=1");
        CHECK(result.header("x-app") == "yes");
        CHECK(result.header("content-length") == std::to_string(result.body.size()));
        for (const char* name : {"connection", "keep-alive", "transfer-encoding"})
            CHECK(result.header(name).empty());
    }
    REQUIRE(upstream.request_count() == 1);
    ReceivedRequest seen = upstream.last_request();
    INFO(seen.head);
    CHECK(seen.method == "GET");
    CHECK(seen.target == "/app/hello?x=1");
    CHECK(seen.version == "HTTP/1.1");
    CHECK(seen.header("host") == "www.a.test");
    CHECK(seen.count("host") == 1);
    CHECK(seen.header("x-forwarded-proto") == "https");
    CHECK(seen.header("x-forwarded-host") == "www.a.test");
    CHECK(seen.header("x-custom") == "1");
    CHECK(seen.header("cookie") == "a=1; b=2");
    CHECK(seen.header("user-agent") == "h2-test");
    // No pseudo-header leaks upstream.
    CHECK(seen.head.find(":authority") == std::string::npos);
    CHECK(seen.head.find(":path") == std::string::npos);

    // curl, an independent client: HTTP/2 negotiated, the bytes equal.
    std::string out = site.dir.path() + "/curl.out";
    std::string resolve = "--resolve a.test:" + std::to_string(port) + ":127.0.0.1";
    auto curl = h2::run_bounded("curl -sS -k --http2 " + resolve + " -o " + out +
                                " -w '%{http_version} %{http_code}' https://a.test:" +
                                std::to_string(port) + "/large.bin");
    INFO(curl.output);
    CHECK(curl.exit_code == 0);
    CHECK(curl.output == "2 200");
    CHECK(sha256_hex(read_text(out)) == sha256_hex(files.large));
    auto curl_proxied = h2::run_bounded("curl -sS -k --http2 " + resolve +
                                        " -w ' %{http_version}' https://a.test:" +
                                        std::to_string(port) + "/app/curl");
    CHECK(curl_proxied.exit_code == 0);
    CHECK(curl_proxied.output == "ok /app/curl 2");
    CHECK(upstream.last_request().header("x-forwarded-proto") == "https");
    CHECK(upstream.last_request().header("host") == "a.test:" + std::to_string(port));

    // h2load over TLS: two connections, ten streams each at a time.
    auto load = h2::run_bounded("h2load -c2 -m10 -n100 https://127.0.0.1:" + std::to_string(port) +
                                "/medium.bin", 20);
    INFO(load.output);
    CHECK(load.exit_code == 0);
    CHECK(load.output.find("100 total, 100 started, 100 done, 100 succeeded, 0 failed, 0 errored") !=
          std::string::npos);
    CHECK(load.output.find("Application protocol: h2") != std::string::npos);
}

TEST_CASE("http2: with enabled = false ALPN selects http/1.1", "[http2][tls]") {
    Certificates certs;
    Site site;
    Files files;
    files.write(site);
    UpstreamServer upstream(digest_app);
    Portico portico(tls_config({certs.entry("a")},
                               "[http2]\nenabled = false\n\n" + locations(site, upstream.address())));
    uint16_t port = tls_port(portico);

    TlsOptions options;
    options.server_name = "a.test";
    options.alpn = {"h2", "http/1.1"};
    TlsClient client(port, options);
    REQUIRE(client.handshake());
    CHECK(client.alpn() == "http/1.1");
    REQUIRE(client.send(get_request("/small.txt", "", "a.test")));
    ResponseReader reader(client);
    auto response = reader.read();
    REQUIRE(response);
    CHECK(response->status == 200);
    CHECK(response->body == files.small);

    // Offered h2 alone: no ALPN agreed (as nginx: the handshake goes on).
    options.alpn = {"h2"};
    TlsClient only_h2(port, options);
    REQUIRE(only_h2.handshake());
    CHECK(only_h2.alpn().empty());

    auto curl = h2::run_bounded("curl -sS -k --http2 --resolve a.test:" + std::to_string(port) +
                                ":127.0.0.1 -o /dev/null -w '%{http_version}' https://a.test:" +
                                std::to_string(port) + "/small.txt");
    CHECK(curl.exit_code == 0);
    CHECK(curl.output == "1.1");
}

TEST_CASE("http2: many concurrent streams on one connection, bytes correct, and h2load -m20",
          "[http2]") {
    Site site;
    Files files;
    files.write(site);
    UpstreamServer upstream(digest_app);
    Portico portico(observed(cleartext_config(site, upstream.address()), site));
    uint16_t metrics = metrics_port(portico);

    // 60 streams at once (all open together, within the 128 allowed): files
    // of every size, proxied requests and large proxied bodies interleaved.
    h2::Client client(portico.port());
    struct Expected {
        uint32_t id;
        std::string body;
    };
    std::vector<Expected> expected;
    for (int i = 0; i < 60; ++i) {
        switch (i % 5) {
        case 0: expected.push_back({client.get("/small.txt"), files.small}); break;
        case 1: expected.push_back({client.get("/medium.bin"), files.medium}); break;
        case 2: expected.push_back({client.get("/large.bin"), files.large}); break;
        case 3: {
            std::string target = "/app/n" + std::to_string(i);
            expected.push_back({client.get(target), "ok " + target});
            break;
        }
        case 4: {
            uint64_t size = 200000 + static_cast<uint64_t>(i);
            expected.push_back({client.get("/app/pattern/" + std::to_string(size)),
                                pattern_bytes(0, size)});
            break;
        }
        }
    }
    std::vector<uint32_t> ids;
    for (const Expected& e : expected) ids.push_back(e.id);
    REQUIRE(client.wait_streams(ids, 20s));
    INFO(client.trace().substr(0, 4000));
    for (const Expected& e : expected) {
        INFO("stream " << e.id);
        const h2::StreamResult& result = client.result(e.id);
        CHECK(result.status == 200);
        CHECK_FALSE(result.reset.has_value());
        CHECK(result.body.size() == e.body.size());
        CHECK(sha256_hex(result.body) == sha256_hex(e.body));
    }
    CHECK_FALSE(client.goaway());
    CHECK(h2::sum_samples(scrape_when(metrics, "portico_http2_streams_total", 60),
                          "portico_http2_streams_total") == 60);

    // h2load, one connection, 20 streams at a time, 200 requests, over h2c.
    auto load = h2::run_bounded("h2load -c1 -m20 -n200 http://127.0.0.1:" +
                                std::to_string(portico.port()) + "/medium.bin", 20);
    INFO(load.output);
    CHECK(load.exit_code == 0);
    CHECK(load.output.find("200 total, 200 started, 200 done, 200 succeeded, 0 failed, 0 errored") !=
          std::string::npos);
    CHECK(load.output.find("status codes: 200 2xx") != std::string::npos);
    CHECK(load.output.find("Application protocol: h2c") != std::string::npos);
    std::string text = scrape_when(metrics, "portico_http2_sessions_total", 2);
    CHECK(h2::sum_samples(text, "portico_http2_sessions_total") == 2);
    CHECK(h2::sum_samples(text, "portico_http2_streams_total") == 260);
}

TEST_CASE("http2: request bodies through the proxy: with and without content-length, past the "
          "stream window (WINDOW_UPDATE), and 413",
          "[http2][proxy]") {
    Site site;
    UpstreamServer upstream(digest_app);
    Portico portico(cleartext_config(site, upstream.address(), "cleartext = true\n",
                                     "max_body_bytes = \"2MiB\"\n"));

    h2::Client client(portico.port());
    struct Case {
        std::string name;
        std::string body;
        bool with_length;
    };
    const std::vector<Case> cases = {
        {"small, content-length", random_bytes(1000, 21), true},
        {"small, no content-length", random_bytes(1000, 22), false},
        {"empty, content-length 0", "", true},
        {"1 MiB, content-length", random_bytes(1u << 20, 23), true},
        {"1 MiB, no content-length", random_bytes((1u << 20) + 17, 24), false},
        {"exactly max_body_bytes", random_bytes(2u << 20, 25), true},
    };
    for (const Case& c : cases) {
        INFO(c.name);
        Fields extra = {{"content-type", "application/octet-stream"}};
        if (c.with_length) extra.push_back({"content-length", std::to_string(c.body.size())});
        uint32_t id = client.request(
            h2::Client::request_fields("POST", "/app/upload", "http", "a.test", extra), c.body);
        REQUIRE(client.wait_stream(id, 15s));
        INFO(client.trace().substr(0, 3000));
        const h2::StreamResult& result = client.result(id);
        CHECK(result.status == 200);
        CHECK(result.body == "got " + std::to_string(c.body.size()) + " " + sha256_hex(c.body) +
                                 (c.with_length ? " length" : " chunked"));
        if (c.body.size() > 65535) {
            // The body needed more than the stream's first window: the
            // server gave it back as the upstream took it.
            CHECK(result.window_updates > 0);
        }
    }

    // Over max_body_bytes with content-length: 413 before any DATA is read.
    {
        uint32_t id = client.request(
            h2::Client::request_fields("POST", "/app/upload", "http", "a.test",
                                       {{"content-length", std::to_string((2u << 20) + 1)}}),
            random_bytes((2u << 20) + 1, 26));
        REQUIRE(client.wait_stream(id));
        INFO(client.trace().substr(client.trace().size() > 3000 ? client.trace().size() - 3000 : 0));
        CHECK(client.result(id).status == 413);
    }
    // Without content-length: 413 once the body passes the limit.
    {
        uint32_t id = client.request(
            h2::Client::request_fields("POST", "/app/upload", "http", "a.test"),
            random_bytes(3u << 20, 27));
        REQUIRE(client.wait_stream(id, 15s));
        INFO(client.trace().substr(client.trace().size() > 3000 ? client.trace().size() - 3000 : 0));
        CHECK(client.result(id).status == 413);
        // The upstream never saw a complete request of that size.
        for (const ReceivedRequest& seen : upstream.requests())
            CHECK(seen.body.size() <= (2u << 20));
    }
    // The connection goes on.
    uint32_t id = client.request(
        h2::Client::request_fields("POST", "/app/upload", "http", "a.test",
                                   {{"content-length", "5"}}),
        std::string("hello"));
    REQUIRE(client.wait_stream(id));
    CHECK(client.result(id).status == 200);
    CHECK(client.result(id).body == "got 5 " + sha256_hex("hello") + " length");
    CHECK_FALSE(client.goaway());
}

TEST_CASE("http2: flow control: a client's small windows are back-pressure, nothing is sent past "
          "them, and the whole body arrives",
          "[http2]") {
    Site site;
    Files files;
    files.write(site);
    UpstreamServer upstream(digest_app);
    Portico portico(cleartext_config(site, upstream.address()));

    SECTION("a file with a stream window of 0, opened a little at a time") {
        h2::ClientOptions options;
        options.settings = {{h2::SETTINGS_ENABLE_PUSH, 0}, {h2::SETTINGS_INITIAL_WINDOW_SIZE, 0}};
        options.auto_window_update = false;
        h2::Client client(portico.port(), options);
        uint32_t id = client.get("/large.bin");
        // The head comes; no DATA while the window is shut.
        auto head = client.wait_for_type(h2::HEADERS);
        REQUIRE(head);
        CHECK(head->field(":status") == "200");
        client.pump_for(500ms);
        INFO(client.trace());
        CHECK(client.result(id).data_frames == 0);

        // Opened by 1 byte, then growing steps; the connection's window too.
        uint64_t granted = 0, connection_granted = 65535;
        uint32_t step = 1;
        auto deadline = Clock::now() + 15s;
        while (!client.result(id).done() && Clock::now() < deadline) {
            std::string updates = h2::window_update_frame(id, step);
            granted += step;
            if (granted > connection_granted) {
                updates += h2::window_update_frame(0, static_cast<uint32_t>(granted - connection_granted));
                connection_granted = granted;
            }
            client.send_raw(updates);
            // Everything granted arrives, and never more.
            while (client.result(id).body.size() < granted && !client.result(id).done() &&
                   Clock::now() < deadline)
                if (!client.next_frame(2s)) break;
            REQUIRE(client.result(id).body.size() <= granted);
            if (client.result(id).body.size() < granted && !client.result(id).done()) break;
            step = step < 60000 ? step * 3 : 60000;
        }
        INFO(client.trace().substr(0, 4000));
        check_file(client, id, files.large);
    }

    SECTION("a proxied body with the window shut: portico stops reading the upstream") {
        const uint64_t size = 32u << 20;
        h2::ClientOptions options;
        options.settings = {{h2::SETTINGS_ENABLE_PUSH, 0}, {h2::SETTINGS_INITIAL_WINDOW_SIZE, 0}};
        options.auto_window_update = false;
        h2::Client client(portico.port(), options);
        uint32_t id = client.get("/app/pattern/" + std::to_string(size));
        REQUIRE(client.wait_for_type(h2::HEADERS));
        // What the upstream got rid of levels off far below the body's size
        // (socket buffers and portico's bounded queue).
        auto sent = [&] {
            uint64_t total = 0;
            for (const ConnectionRecord& record : upstream.connections()) total += record.bytes_sent;
            return total;
        };
        std::this_thread::sleep_for(1500ms);
        uint64_t first = sent();
        std::this_thread::sleep_for(1000ms);
        uint64_t second = sent();
        INFO("upstream sent " << first << " then " << second);
        CHECK(second < size / 2);
        CHECK(second - first < (1u << 20));
        // Opened: everything arrives, in order.
        client.set_auto_window_update(true);
        client.send_raw(h2::window_update_frame(id, 1u << 30) + h2::window_update_frame(0, 1u << 30));
        REQUIRE(client.wait_stream(id, 20s));
        const h2::StreamResult& result = client.result(id);
        CHECK(result.status == 200);
        CHECK(result.body.size() == size);
        CHECK(result.body == pattern_bytes(0, size));
    }
}

TEST_CASE("http2: counters and the access log: requests, sessions, streams, resets by side, "
          "GOAWAYs",
          "[http2][metrics]") {
    Site site;
    Files files;
    files.write(site);
    UpstreamServer upstream([](const ReceivedRequest& request) {
        if (request.target == "/app/hold")
            return Reply().wait_release().send("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nheld");
        return digest_app(request);
    });
    Portico portico(observed(cleartext_config(site, upstream.address()), site));
    uint16_t metrics = metrics_port(portico);
    const std::string static_200 = "portico_requests_total{location=\"static\",code=\"200\"}";
    std::string before = scrape(metrics);
    CHECK(h2::sum_samples(before, "portico_http2_sessions_total") == 0);
    CHECK(h2::sum_samples(before, "portico_http2_streams_total") == 0);
    CHECK(h2::sum_samples(before, "portico_http2_goaways_sent_total") == 0);
    for (const char* side : {"client", "server"})
        CHECK(h2::sum_samples(before, std::string("portico_http2_resets_total{side=\"") + side +
                                          "\"}") == 0);

    const int n = 7;
    h2::Client client(portico.port());
    std::vector<uint32_t> ids;
    for (int i = 0; i < n; ++i) ids.push_back(client.get(i % 2 ? "/small.txt" : "/medium.bin"));
    REQUIRE(client.wait_streams(ids));
    std::string text = scrape_when(metrics, static_200, n);
    CHECK(sample(text, static_200) == n);
    CHECK(h2::sum_samples(text, "portico_http2_sessions_total") == 1);
    CHECK(h2::sum_samples(text, "portico_http2_streams_total") == n);
    CHECK(h2::sum_samples(text, "portico_connections_accepted_total") >= 1);

    // A stream the client resets (CANCEL) while its upstream holds it: a
    // client-side reset, and a 499 for the location.
    uint32_t held = client.get("/app/hold");
    REQUIRE(upstream.wait_for_requests(1, 5s));
    client.send_raw(h2::rst_stream_frame(held, h2::CANCEL));
    text = scrape_when(metrics, "portico_http2_resets_total{side=\"client\"}", 1);
    CHECK(sample(text, "portico_http2_resets_total{side=\"client\"}") == 1);
    upstream.release_held();

    // A malformed request (an upper-case field name): the server resets it.
    std::string block = h2::hpack_literal(":method", "GET") + h2::hpack_literal(":scheme", "http") +
                        h2::hpack_literal(":authority", "a.test") +
                        h2::hpack_literal(":path", "/small.txt") + h2::hpack_literal("X-Upper", "1");
    uint32_t bad = client.next_stream_id();
    client.send_headers_block(bad, block, h2::FLAG_END_HEADERS | h2::FLAG_END_STREAM);
    REQUIRE(client.wait_stream(bad));
    CHECK(client.result(bad).reset == std::optional<uint32_t>(h2::PROTOCOL_ERROR));
    text = scrape_when(metrics, "portico_http2_resets_total{side=\"server\"}", 1);
    CHECK(sample(text, "portico_http2_resets_total{side=\"server\"}") == 1);
    CHECK(h2::sum_samples(text, "portico_http2_goaways_sent_total") == 0);

    // A connection error (WINDOW_UPDATE of 0 on the connection, RFC 9113
    // 6.9): GOAWAY PROTOCOL_ERROR, counted.
    client.send_raw(h2::window_update_frame(0, 0));
    auto goaway = client.wait_for_type(h2::GOAWAY);
    REQUIRE(goaway);
    CHECK(goaway->error_code() == h2::PROTOCOL_ERROR);
    CHECK(client.wait_closed());
    text = scrape_when(metrics, "portico_http2_goaways_sent_total", 1);
    CHECK(h2::sum_samples(text, "portico_http2_goaways_sent_total") == 1);

    // A second connection is a second session.
    h2::Client second(portico.port());
    uint32_t last = second.get("/small.txt");
    REQUIRE(second.wait_stream(last));
    text = scrape_when(metrics, static_200, n + 1);
    CHECK(sample(text, static_200) == n + 1);
    CHECK(h2::sum_samples(text, "portico_http2_sessions_total") == 2);

    // Every stream is an access log line with HTTP/2.0 in it.
    std::string log;
    UpstreamServer::wait_until([&] {
        log = read_text(site.dir.path() + "/access.log");
        return count_lines_with(log, "HTTP/2.0") >= n + 3;
    }, 2s);
    INFO(log);
    CHECK(count_lines_with(log, "\"GET /small.txt HTTP/2.0\" 200 ") == (n / 2) + 1);
    CHECK(count_lines_with(log, "\"GET /medium.bin HTTP/2.0\" 200 " +
                                    std::to_string(files.medium.size())) == (n + 1) / 2);
    CHECK(count_lines_with(log, "\"GET /app/hold HTTP/2.0\" 499 ") == 1);
    CHECK(count_lines_with(log, "HTTP/1.1") == 0);
}

TEST_CASE("http2: a reload drains an h2 connection: GOAWAY, the stream in flight completes",
          "[http2][reload]") {
    Site site;
    Files files;
    files.write(site);
    UpstreamServer upstream(digest_app);
    // keepalive_timeout is the drain's grace for connections with nothing
    // in flight; a short one makes the GOAWAY come soon.
    std::string config = observed(
        cleartext_config(site, upstream.address(), "cleartext = true\n",
                         "keepalive_timeout = \"1s\"\nshutdown_timeout = \"10s\"\n"),
        site);
    Portico portico(config);
    REQUIRE(portico.wait_for_log("worker", 1));

    h2::Client client(portico.port());
    uint32_t slow = client.get("/app/slow");
    REQUIRE(client.wait_for([&](const h2::Frame& frame) {
        return frame.type == h2::DATA && frame.stream == slow;
    }));
    auto reloaded_at = Clock::now();
    portico.rewrite_config(config);
    portico.signal(SIGHUP);

    auto goaway = client.wait_for_type(h2::GOAWAY, 8s);
    INFO(client.trace());
    REQUIRE(goaway);
    CHECK(goaway->error_code() == h2::NO_ERROR);
    CHECK(goaway->last_stream() >= slow);
    // The stream goes on to its end.
    REQUIRE(client.wait_stream(slow, 10s));
    CHECK(client.result(slow).status == 200);
    CHECK(client.result(slow).body == "one,two,three,four,five");
    CHECK_FALSE(client.result(slow).reset);
    // Then the connection closes.
    CHECK(client.wait_closed(5s));
    CHECK(ms_since(reloaded_at) < 12000);

    // New connections reach the new worker.
    h2::Client next(portico.port());
    uint32_t id = next.get("/small.txt");
    REQUIRE(next.wait_stream(id));
    check_file(next, id, files.small);
}

TEST_CASE("http2: a stop drains an h2 connection: GOAWAY, the stream in flight completes",
          "[http2][reload]") {
    Site site;
    UpstreamServer upstream(digest_app);
    Portico portico(cleartext_config(site, upstream.address(), "cleartext = true\n",
                                     "keepalive_timeout = \"1s\"\nshutdown_timeout = \"10s\"\n"));
    h2::Client client(portico.port());
    uint32_t slow = client.get("/app/slow");
    REQUIRE(client.wait_for([&](const h2::Frame& frame) {
        return frame.type == h2::DATA && frame.stream == slow;
    }));
    portico.signal(SIGTERM);
    auto goaway = client.wait_for_type(h2::GOAWAY, 8s);
    INFO(client.trace());
    REQUIRE(goaway);
    CHECK(goaway->error_code() == h2::NO_ERROR);
    REQUIRE(client.wait_stream(slow, 10s));
    CHECK(client.result(slow).body == "one,two,three,four,five");
    CHECK(client.wait_closed(5s));
    CHECK(portico.wait_exit(10s) == std::optional<int>(0));
}

TEST_CASE("http2: what a location does works the same over h2: ranges, 304, respond, compression, "
          "HEAD proxied, request trailers, large response headers, concurrent uploads",
          "[http2]") {
    Site site;
    Files files;
    files.write(site);
    std::string css;
    for (int i = 0; css.size() < 100000; ++i)
        css += ".rule-" + std::to_string(i) + " { margin: " + std::to_string(i % 17) + "px; }\n";
    site.write("gz/site.css", css);
    const std::string big_header(30000, 'h');
    UpstreamServer upstream([&](const ReceivedRequest& request) {
        if (request.target == "/app/big-header")
            return Reply::text(200, "big", "X-Big: " + big_header + "\r\n");
        if (request.method == "HEAD")
            return Reply::raw("HTTP/1.1 200 OK\r\nContent-Length: 1234\r\nX-Head: yes\r\n\r\n",
                              Reply::Then::keep_alive);
        return digest_app(request);
    });
    Portico portico("[server]\nlisten = [\"{listen}\"]\nworkers = 1\n\n[http2]\ncleartext = true\n\n"
                    "[upstream.app]\nservers = [\"" + upstream.address() + "\"]\n\n"
                    "[[location]]\nprefix = \"/app/\"\nproxy = \"app\"\n\n"
                    "[[location]]\nexact = \"/respond\"\nrespond = { status = 201, body = \"made\\n\" }\n"
                    "headers = { \"X-Frame-Options\" = \"DENY\" }\n\n"
                    "[[location]]\nprefix = \"/gz/\"\nroot = \"" + site.root() + "\"\ncompress = true\n\n"
                    "[[location]]\nprefix = \"/\"\nroot = \"" + site.root() + "\"\n");
    h2::Client client(portico.port());

    SECTION("Range: 206 with the bytes asked for") {
        uint32_t id = client.get("/large.bin", {{"range", "bytes=1000000-1099999"}});
        REQUIRE(client.wait_stream(id));
        const h2::StreamResult& result = client.result(id);
        CHECK(result.status == 206);
        CHECK(result.header("content-range") ==
              "bytes 1000000-1099999/" + std::to_string(files.large.size()));
        CHECK(result.header("content-length") == "100000");
        CHECK(result.body == files.large.substr(1000000, 100000));
    }
    SECTION("If-None-Match: 304, no DATA") {
        uint32_t first = client.get("/medium.bin");
        REQUIRE(client.wait_stream(first));
        std::string etag = client.result(first).header("etag");
        REQUIRE_FALSE(etag.empty());
        uint32_t id = client.get("/medium.bin", {{"if-none-match", etag}});
        REQUIRE(client.wait_stream(id));
        INFO(client.trace());
        CHECK(client.result(id).status == 304);
        CHECK(client.result(id).data_frames == 0);
        CHECK(client.result(id).header("content-length").empty());
    }
    SECTION("respond, with the location's headers") {
        uint32_t id = client.get("/respond");
        REQUIRE(client.wait_stream(id));
        CHECK(client.result(id).status == 201);
        CHECK(client.result(id).body == "made\n");
        CHECK(client.result(id).header("x-frame-options") == "DENY");
    }
    SECTION("compression by accept-encoding, decoded to the file") {
        for (std::string coding : {"gzip", "br", "zstd"}) {
            INFO(coding);
            uint32_t id = client.get("/gz/site.css", {{"accept-encoding", coding}});
            REQUIRE(client.wait_stream(id));
            const h2::StreamResult& result = client.result(id);
            CHECK(result.status == 200);
            CHECK(result.header("content-encoding") == coding);
            CHECK(result.header("vary") == "Accept-Encoding");
            CHECK(result.body.size() < css.size());
            auto decoded = decode_body(coding, result.body);
            REQUIRE(decoded);
            CHECK(*decoded == css);
            // A content-length, when there is one, is the compressed length.
            if (!result.header("content-length").empty())
                CHECK(result.header("content-length") == std::to_string(result.body.size()));
        }
    }
    SECTION("HEAD proxied: the upstream's head, no DATA") {
        uint32_t id = client.get("/app/head", {}, "HEAD");
        REQUIRE(client.wait_stream(id));
        INFO(client.trace());
        CHECK(upstream.last_request().method == "HEAD");
        CHECK(client.result(id).status == 200);
        CHECK(client.result(id).header("x-head") == "yes");
        CHECK(client.result(id).header("content-length") == "1234");
        CHECK(client.result(id).data_frames == 0);
    }
    SECTION("request trailers end the body") {
        uint32_t id = client.next_stream_id();
        client.set_next_stream_id(id + 2);
        client.send_headers_block(
            id, client.encoder().encode(h2::Client::request_fields("POST", "/app/upload", "http", "a.test")),
            h2::FLAG_END_HEADERS);
        client.send_body(id, "body before the trailers", false);
        client.send_raw(h2::frame(h2::HEADERS, h2::FLAG_END_HEADERS | h2::FLAG_END_STREAM, id,
                                  client.encoder().encode({{"x-checksum", "abc"}})));
        REQUIRE(client.wait_stream(id));
        INFO(client.trace());
        CHECK(client.result(id).status == 200);
        CHECK(client.result(id).body == "got 24 " + sha256_hex("body before the trailers") + " chunked");
    }
    SECTION("a response head larger than a frame (HEADERS + CONTINUATION)") {
        uint32_t id = client.get("/app/big-header");
        REQUIRE(client.wait_stream(id));
        INFO(client.trace().substr(0, 2000));
        CHECK(client.result(id).status == 200);
        CHECK(client.result(id).header("x-big") == big_header);
        CHECK(client.result(id).body == "big");
    }
    SECTION("five 1 MiB uploads at once on one connection") {
        std::vector<std::pair<uint32_t, std::string>> uploads;
        for (uint32_t i = 0; i < 5; ++i) {
            std::string body = random_bytes((1u << 20) + i, 60 + i);
            Fields extra;
            if (i % 2) extra.push_back({"content-length", std::to_string(body.size())});
            uploads.push_back({client.request(h2::Client::request_fields("POST", "/app/upload", "http",
                                                                         "a.test", extra),
                                              body),
                               body});
        }
        std::vector<uint32_t> ids;
        for (const auto& upload : uploads) ids.push_back(upload.first);
        REQUIRE(client.wait_streams(ids, 20s));
        for (uint32_t i = 0; i < uploads.size(); ++i) {
            INFO("upload " << i);
            const h2::StreamResult& result = client.result(uploads[i].first);
            CHECK(result.status == 200);
            CHECK(result.body == "got " + std::to_string(uploads[i].second.size()) + " " +
                                     sha256_hex(uploads[i].second) + (i % 2 ? " length" : " chunked"));
        }
    }
    CHECK_FALSE(client.goaway());
}

TEST_CASE("http2: an upstream read with more chunks than one send takes arrives once and in order, "
          "compressed or not",
          "[http2]") {
    // 40 chunks in one upstream write: the proxy sends them in groups of 16
    // from inside llhttp, and the h2 socket takes each group at once. A drain
    // reported from inside such a send ran the parser again (found in
    // review: the body came twice); through a compressing location the
    // encoder sits between the two.
    Site site;
    ManyChunks chunks(40);
    UpstreamServer upstream([&](const ReceivedRequest&) { return Reply::raw(chunks.raw, Reply::Then::keep_alive); });
    Portico portico("[server]\nlisten = [\"{listen}\"]\nworkers = 1\n\n[http2]\ncleartext = true\n\n"
                    "[[location]]\nprefix = \"/packed/\"\nproxy = \"app\"\n"
                    "compress = { min_length = 1, gzip_level = 1, brotli_level = 1, zstd_level = 1 }\n\n" +
                    locations(site, upstream.address()));
    h2::Client client(portico.port());
    for (std::string coding : {"", "gzip", "br", "zstd"}) {
        INFO("coding: " << coding);
        for (int round = 0; round < 3; ++round) {
            uint32_t id = coding.empty() ? client.get("/app/many")
                                         : client.get("/packed/many", {{"accept-encoding", coding}});
            REQUIRE(client.wait_stream(id));
            INFO(client.trace());
            const h2::StreamResult& result = client.result(id);
            CHECK(result.status == 200);
            CHECK(result.header("content-encoding") == coding);
            if (coding.empty()) {
                CHECK(result.body == chunks.body);
                continue;
            }
            auto decoded = decode_body(coding, result.body);
            REQUIRE(decoded);
            CHECK(*decoded == chunks.body);
        }
    }
}

TEST_CASE("http2: a reader that lags behind an upstream read of many chunks gets each chunk once",
          "[http2]") {
    // The HTTP/1.1 case of proxy_streaming_test over h2: a large window lets
    // the stream's output outrun the client, and groups sent from inside the
    // parser find it pending. (Over HTTP/1.1 that test failed 3 runs in 8
    // while a send could report a drain; over h2 the same timing was not
    // reproduced here: nghttp2 frames all that is queued at each send, which
    // a lagging reader rarely takes at once.)
    Site site;
    ManyChunks chunks(25000);
    UpstreamServer upstream([&](const ReceivedRequest&) { return Reply::raw(chunks.raw, Reply::Then::keep_alive); });
    Portico portico(cleartext_config(site, upstream.address()));
    h2::ClientOptions options;
    options.settings = {{h2::SETTINGS_ENABLE_PUSH, 0}, {h2::SETTINGS_INITIAL_WINDOW_SIZE, 1u << 24}};
    options.receive_buffer = 4096;
    options.max_segment = 536;
    h2::Client client(portico.port(), options);
    client.send_raw(h2::window_update_frame(0, (1u << 24) - 65535));  // the connection's window too
    for (int round = 0; round < 3; ++round) {
        uint32_t id = client.get("/app/many");
        REQUIRE(client.wait_stream(id, 30s));
        const h2::StreamResult& result = client.result(id);
        CHECK(result.status == 200);
        CHECK(result.body.size() == chunks.body.size());
        bool each_chunk_once_in_order = result.body == chunks.body;  // not 1 MB of diff
        CHECK(each_chunk_once_in_order);
    }
}
