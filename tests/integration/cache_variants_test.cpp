// The response cache's compressed variants, "stored once per coding", and
// stale_while_revalidate's background refresh, with the real binary, two
// workers and a real upstream that counts its requests. The compression
// counters are the oracle that a coded hit did no compression work: the
// miss and the first hit of a coding are compressed, no later hit is.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include "content_decoder.hpp"
#include "harness.hpp"
#include "http2_support.hpp"
#include "proxy_support.hpp"
#include "upstream_server.hpp"

using namespace portico::test;

namespace cache_variants_test {

namespace {

// 10 KiB of compressible text, different per upstream answer.
std::string page_text(int n) {
    std::string text;
    while (text.size() < 10 * 1024)
        text +=
            "<p>answer " + std::to_string(n) + " line " + std::to_string(text.size()) + "</p>\n";
    return text;
}

std::string variants_config(const std::string& upstream, uint16_t metrics_port,
                            const std::string& cache_options) {
    return with_metrics(
        "[server]\nlisten = [\"{listen}\"]\nworkers = 2\n\n[http2]\ncleartext = "
        "true\n\n[cache.pages]\nmemory = \"2MiB\"\n\n[upstream.app]\nservers = [\"" +
            upstream +
            "\"]\n\n[[location]]\nprefix = \"/\"\nproxy = \"app\"\ncompress = true\n"
            "cache = { zone = \"pages\", status_header = \"X-Cache-Status\"" +
            cache_options + " }\n",
        metrics_port);
}

struct Setup {
    explicit Setup(Behaviour behaviour, const std::string& cache_options = "")
        : upstream(std::make_unique<UpstreamServer>(std::move(behaviour))),
          metrics_port(unused_port()),
          portico(variants_config(upstream->address(), metrics_port, cache_options)) {}
    std::unique_ptr<UpstreamServer> upstream;
    uint16_t metrics_port;
    Portico portico;

    // One request on a new connection (the kernel spreads them over both workers).
    Response get(const std::string& target, const std::string& extra = "") {
        Client client(portico.port());
        client.send("GET " + target + " HTTP/1.1\r\nHost: front.example\r\n" + extra + "\r\n");
        ResponseReader reader(client.fd());
        std::optional<Response> response = reader.read(5s);
        REQUIRE(response);
        return *response;
    }
    // Responses the compression filter compressed (from its worker's
    // compressed cache or not): each stands for compression work.
    double compressed(const std::string& coding) {
        double value =
            metric(metrics_port, "portico_compressed_responses_total{coding=\"" + coding + "\"}");
        return value < 0 ? 0 : value;
    }
};

size_t requests_for(const UpstreamServer& upstream, const std::string& target) {
    size_t count = 0;
    for (const ReceivedRequest& request : upstream.requests()) count += request.target == target;
    return count;
}

Behaviour counting_pages(std::string extra = "Cache-Control: max-age=60\r\nETag: \"v1\"\r\n") {
    auto answered = std::make_shared<std::atomic<int>>(0);
    return [answered, extra](const ReceivedRequest&) {
        return Reply::text(200, page_text(++*answered), extra);
    };
}

}  // namespace

TEST_CASE("cache variants: a coding is compressed once, then served stored in every worker",
          "[cache-variants]") {
    Setup setup(counting_pages());
    for (std::string coding : {"gzip", "br"}) {
        std::string target = "/" + coding;
        std::string accept = "Accept-Encoding: " + coding + "\r\n";
        Response miss = setup.get(target, accept);
        CHECK(miss.header("x-cache-status") == "MISS");
        CHECK(decode_body(coding, miss.body) == page_text(coding == "gzip" ? 1 : 2));
        double after_miss = setup.compressed(coding);
        Response first = setup.get(target, accept);  // compressed, and stored
        CHECK(setup.compressed(coding) == after_miss + 1);
        CHECK(first.header("content-encoding") == coding);
        std::optional<std::string> decoded = decode_body(coding, first.body);
        REQUIRE(decoded);
        std::string identity = *decoded;
        // 20 new connections: both workers serve the stored bytes, with no
        // compression work, and the upstream saw one request.
        for (int i = 0; i < 20; ++i) {
            Response hit = setup.get(target, accept);
            CHECK(hit.status == 200);
            CHECK(hit.header("x-cache-status") == "HIT");
            CHECK(hit.header("content-encoding") == coding);
            CHECK(hit.header("vary") == "Accept-Encoding");
            CHECK(hit.header("etag") == "W/\"v1\"");
            CHECK(hit.header("content-length") == std::to_string(first.body.size()));
            CHECK(hit.header("accept-ranges").empty());
            CHECK(!hit.header("age").empty());
            CHECK(hit.body == first.body);
        }
        CHECK(setup.compressed(coding) == after_miss + 1);
        CHECK(requests_for(*setup.upstream, target) == 1);
        // An identity client still gets the identity, from the same object.
        Response plain = setup.get(target);
        CHECK(plain.header("content-encoding").empty());
        CHECK(plain.header("x-cache-status") == "HIT");
        CHECK(plain.body == identity);
        // A conditional request on the coded variant: its weak ETag matches.
        Response not_modified = setup.get(target, accept + "If-None-Match: W/\"v1\"\r\n");
        CHECK(not_modified.status == 304);
        // A Range request gets the identity's bytes, as the compression
        // filter leaves it.
        Response range = setup.get(target, accept + "Range: bytes=0-9\r\n");
        CHECK(range.status == 206);
        CHECK(range.header("content-encoding").empty());
        CHECK(range.body == identity.substr(0, 10));
    }
}

TEST_CASE("cache variants: purge and a new identity object drop the coded variants",
          "[cache-variants]") {
    // Stored for one second: the object is replaced soon without a purge.
    Setup setup(counting_pages("Cache-Control: max-age=1\r\n"));
    std::string accept = "Accept-Encoding: gzip\r\n";
    setup.get("/d", accept);
    Response first = setup.get("/d", accept);
    CHECK(decode_body("gzip", first.body) == page_text(1));
    CHECK(setup.get("/d", accept).body == first.body);
    std::optional<Response> purged =
        proxy_fetch(setup.metrics_port,
                    "POST /cache/purge?prefix=httpfront.example/d HTTP/1.1\r\nHost: "
                    "x\r\nContent-Length: 0\r\n\r\n");
    REQUIRE(purged);
    // The identity and its gzip variant.
    CHECK(purged->body == "{\"purged\": 2}");
    Response after_purge = setup.get("/d", accept);
    CHECK(after_purge.header("x-cache-status") == "MISS");
    CHECK(decode_body("gzip", after_purge.body) == page_text(2));
    Response coded = setup.get("/d", accept);
    CHECK(decode_body("gzip", coded.body) == page_text(2));
    // Expired: the next request stores a new identity object, and its
    // coded hits are of it, never of the old one's variant.
    std::this_thread::sleep_for(2100ms);
    Response expired = setup.get("/d", accept);
    CHECK(expired.header("x-cache-status") == "EXPIRED");
    CHECK(decode_body("gzip", expired.body) == page_text(3));
    for (int i = 0; i < 4; ++i)
        CHECK(decode_body("gzip", setup.get("/d", accept).body) == page_text(3));
    CHECK(requests_for(*setup.upstream, "/d") == 3);
}

TEST_CASE("cache variants: over HTTP/2 the stored coded bytes are served", "[cache-variants]") {
    Setup setup(counting_pages());
    std::string accept = "Accept-Encoding: br\r\n";
    setup.get("/h2", accept);
    Response first = setup.get("/h2", accept);  // stores the br variant
    double after_first = setup.compressed("br");
    h2::Client client(setup.portico.port());
    h2::Fields headers = {{"accept-encoding", "br"}};
    uint32_t a = client.get("/h2", headers, "GET", "front.example");
    uint32_t b = client.get("/h2", headers, "GET", "front.example");
    uint32_t plain = client.get("/h2", {}, "GET", "front.example");
    REQUIRE(client.wait_streams({a, b, plain}));
    for (uint32_t id : {a, b}) {
        const h2::StreamResult& result = client.result(id);
        CHECK(result.status == 200);
        CHECK(result.header("content-encoding") == "br");
        CHECK(result.header("x-cache-status") == "HIT");
        CHECK(result.body == first.body);
    }
    CHECK(client.result(plain).header("content-encoding").empty());
    CHECK(client.result(plain).body == page_text(1));
    CHECK(setup.compressed("br") == after_first);
    CHECK(requests_for(*setup.upstream, "/h2") == 1);
}

namespace {

// The first answer stored stale already (Age equal to max-age), the next
// ones after `delay`; "page N".
Behaviour stale_then_slow(std::chrono::milliseconds delay, int failing_status = 0) {
    auto answered = std::make_shared<std::atomic<int>>(0);
    return [answered, delay, failing_status](const ReceivedRequest&) {
        int n = ++*answered;
        if (n == 1) return Reply::text(200, "page 1", "Cache-Control: max-age=60\r\nAge: 60\r\n");
        if (failing_status != 0) return Reply::text(failing_status, "failed").delayed(delay);
        return Reply::text(200, "page " + std::to_string(n), "Cache-Control: max-age=60\r\n")
            .delayed(delay);
    };
}

}  // namespace

TEST_CASE(
    "cache refresh: the first stale request is answered at once, one refresh in the "
    "background",
    "[cache-variants]") {
    Setup setup(stale_then_slow(500ms), ", stale_while_revalidate = \"30s\"");
    CHECK(setup.get("/w").body == "page 1");
    for (int i = 0; i < 5; ++i) {
        auto start = std::chrono::steady_clock::now();
        Response stale = setup.get("/w");
        CHECK(std::chrono::steady_clock::now() - start < 150ms);
        CHECK(stale.body == "page 1");
        CHECK(stale.header("x-cache-status") == (i == 0 ? "STALE" : "UPDATING"));
    }
    // Over HTTP/2 as well, while the refresh runs.
    h2::Client client(setup.portico.port());
    uint32_t stream = client.get("/w", {}, "GET", "front.example");
    REQUIRE(client.wait_stream(stream));
    CHECK(client.result(stream).body == "page 1");
    CHECK(client.result(stream).header("x-cache-status") == "UPDATING");
    REQUIRE(UpstreamServer::wait_until([&] { return setup.upstream->request_count() == 2; }, 2s));
    // The refresh asked for the whole object, as a GET.
    CHECK(setup.upstream->requests().back().method == "GET");
    REQUIRE(UpstreamServer::wait_until([&] { return setup.get("/w").body == "page 2"; }, 3s));
    Response fresh = setup.get("/w");
    CHECK(fresh.body == "page 2");
    CHECK(fresh.header("x-cache-status") == "HIT");
    CHECK(setup.upstream->request_count() == 2);
}

TEST_CASE("cache refresh: it survives the client that started it leaving", "[cache-variants]") {
    Setup setup(stale_then_slow(500ms), ", stale_while_revalidate = \"30s\"");
    CHECK(setup.get("/gone").body == "page 1");
    {
        Client client(setup.portico.port());
        client.send("GET /gone HTTP/1.1\r\nHost: front.example\r\n\r\n");
        // Closed while the upstream is still working on the refresh.
        REQUIRE(
            UpstreamServer::wait_until([&] { return setup.upstream->request_count() == 2; }, 2s));
    }
    std::this_thread::sleep_for(700ms);
    Response fresh = setup.get("/gone");
    CHECK(fresh.body == "page 2");
    CHECK(fresh.header("x-cache-status") == "HIT");
    CHECK(setup.upstream->request_count() == 2);
}

TEST_CASE("cache refresh: a failing refresh keeps the stale copy and is logged",
          "[cache-variants]") {
    Setup setup(stale_then_slow(0ms, 502),
                ", stale_while_revalidate = \"30s\", stale_if_error = \"1h\"");
    CHECK(setup.get("/f").body == "page 1");
    // Each stale answer starts a refresh once the last one failed: every
    // one fails, the page stays.
    for (int i = 0; i < 6; ++i) {
        Response stale = setup.get("/f");
        CHECK(stale.status == 200);
        CHECK(stale.body == "page 1");
        std::this_thread::sleep_for(50ms);
    }
    CHECK(setup.upstream->request_count() >= 3);
    // At most one line a second per worker.
    REQUIRE(setup.portico.wait_for_log("background refresh of httpfront.example/f failed (502)"));
    std::string log = setup.portico.log();
    size_t lines = 0;
    for (size_t at = log.find("background refresh of"); at != std::string::npos;
         at = log.find("background refresh of", at + 1))
        ++lines;
    CHECK(lines >= 1);
    CHECK(lines <= 2);
    CHECK(setup.get("/f").status == 200);  // still serving
}

}  // namespace cache_variants_test
