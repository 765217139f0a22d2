// The response cache with the real binary, two workers and a real upstream
// that counts its requests: a hit in the other worker, one upstream request
// for 1,000 concurrent misses with `lock`, stale pages while the app is down
// (then 502), Vary variants apart, what is never stored (Set-Cookie, a
// truncated body, a body larger than the zone allows), 304, 206 and HEAD
// from the cache, HTTP/2, purge, and a zone that stays within its memory.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "content_decoder.hpp"
#include "harness.hpp"
#include "http2_support.hpp"
#include "proxy_support.hpp"
#include "upstream_server.hpp"

using namespace portico::test;

namespace cache_test {

namespace {

// "page N of TARGET" (N counts the upstream's answers), fresh for a minute.
Behaviour counting_pages(std::string extra = "Cache-Control: max-age=60\r\n") {
    auto answered = std::make_shared<std::atomic<int>>(0);
    return [answered, extra](const ReceivedRequest& request) {
        return Reply::text(200, "page " + std::to_string(++*answered) + " of " + request.target,
                           extra);
    };
}

std::string cache_config(const std::string& upstream, uint16_t metrics_port,
                         const std::string& cache_options = "",
                         const std::string& zone = "memory = \"1MiB\"\n") {
    return with_metrics(
        "[server]\nlisten = [\"{listen}\"]\nworkers = 2\n\n[http2]\ncleartext = "
        "true\n\n[cache.pages]\n" +
            zone + "\n[upstream.app]\nservers = [\"" + upstream +
            "\"]\n\n[[location]]\nprefix = \"/\"\nproxy = \"app\"\n"
            "cache = { zone = \"pages\", status_header = \"X-Cache-Status\"" +
            cache_options + " }\n",
        metrics_port);
}

struct Setup {
    explicit Setup(Behaviour behaviour, const std::string& cache_options = "",
                   const std::string& zone = "memory = \"1MiB\"\n")
        : upstream(std::make_unique<UpstreamServer>(std::move(behaviour))),
          metrics_port(unused_port()),
          portico(cache_config(upstream->address(), metrics_port, cache_options, zone)) {}
    std::unique_ptr<UpstreamServer> upstream;
    uint16_t metrics_port;
    Portico portico;

    // One request on a new connection (the kernel spreads them over both
    // workers' sockets).
    Response get(const std::string& target, const std::string& extra = "",
                 const std::string& method = "GET") {
        Client client(portico.port());
        client.send(method + " " + target + " HTTP/1.1\r\nHost: front.example\r\n" + extra +
                    "\r\n");
        ResponseReader reader(client.fd());
        std::optional<Response> response = reader.read(5s, method == "HEAD");
        REQUIRE(response);
        return *response;
    }
    double cache_requests(const std::string& result) {
        double value = metric(
            metrics_port, "portico_cache_requests_total{location=\"/\",result=\"" + result + "\"}");
        return value < 0 ? 0 : value;
    }
};

size_t requests_for(const UpstreamServer& upstream, const std::string& target) {
    size_t count = 0;
    for (const ReceivedRequest& request : upstream.requests()) count += request.target == target;
    return count;
}

}  // namespace

// The soft descriptor limit for what starts while it lives (the workers
// inherit it), then the one before.
class DescriptorLimit {
public:
    explicit DescriptorLimit(rlim_t soft) {
        ::getrlimit(RLIMIT_NOFILE, &before_);
        rlimit lowered = before_;
        lowered.rlim_cur = soft;
        ::setrlimit(RLIMIT_NOFILE, &lowered);
    }
    ~DescriptorLimit() { ::setrlimit(RLIMIT_NOFILE, &before_); }

private:
    rlimit before_{};
};

TEST_CASE("cache: a response stored by one worker is a hit in the other", "[cache]") {
    Setup setup(counting_pages());
    Response first = setup.get("/a");
    CHECK(first.status == 200);
    CHECK(first.body == "page 1 of /a");
    CHECK(first.header("x-cache-status") == "MISS");
    // 20 new connections: both workers answer some (all in one worker
    // would be one chance in 2^19), and the upstream saw one request.
    for (int i = 0; i < 20; ++i) {
        Response again = setup.get("/a");
        CHECK(again.status == 200);
        CHECK(again.body == "page 1 of /a");
        CHECK(again.header("x-cache-status") == "HIT");
        CHECK(!again.header("age").empty());
    }
    CHECK(requests_for(*setup.upstream, "/a") == 1);
    CHECK(setup.cache_requests("hit") == 20);
    CHECK(setup.cache_requests("miss") == 1);
    // Another method passes by.
    Response post = setup.get("/a", "Content-Length: 0\r\n", "POST");
    CHECK(post.header("x-cache-status").empty());
    CHECK(requests_for(*setup.upstream, "/a") == 2);
    CHECK(setup.cache_requests("bypass") == 1);
}

TEST_CASE("cache: 1000 concurrent misses for one key reach the upstream once with lock",
          "[cache]") {
    // A socket per request here, and in the workers the client sides and
    // their waits: more than the default 1,024 descriptors.
    rlimit files{};
    ::getrlimit(RLIMIT_NOFILE, &files);
    REQUIRE((files.rlim_max == RLIM_INFINITY || files.rlim_max >= 4096));
    std::optional<DescriptorLimit> raised;
    if (files.rlim_cur != RLIM_INFINITY && files.rlim_cur < 4096) raised.emplace(4096);
    auto answered = std::make_shared<std::atomic<int>>(0);
    Setup setup(
        [answered](const ReceivedRequest&) {
            return Reply::text(200, "slow page " + std::to_string(++*answered),
                               "Cache-Control: max-age=60\r\n")
                .delayed(1000ms);
        },
        ", lock = true");
    // Every request is sent before the upstream answers the first (1 s).
    std::vector<std::unique_ptr<Client>> clients;
    for (int i = 0; i < 1000; ++i) {
        clients.push_back(std::make_unique<Client>(setup.portico.port()));
        clients.back()->send(get_request("/slow"));
    }
    int ok = 0;
    for (auto& client : clients) {
        std::optional<Response> response = ResponseReader(client->fd()).read(10s);
        ok += response && response->status == 200 && response->body == "slow page 1";
    }
    CHECK(ok == 1000);
    CHECK(requests_for(*setup.upstream, "/slow") == 1);
    CHECK(setup.get("/after").status == 200);
}

TEST_CASE("cache: with the app stopped, the stale page for stale_if_error, then 502", "[cache]") {
    // Stored stale already (Age equal to max-age), so the test need not
    // wait for it to age.
    Setup setup(counting_pages("Cache-Control: max-age=10\r\nAge: 10\r\n"),
                ", stale_if_error = \"2s\"");
    CHECK(setup.get("/s").body == "page 1 of /s");
    setup.upstream.reset();  // connections refused from now on
    Response stale = setup.get("/s");
    CHECK(stale.status == 200);
    CHECK(stale.body == "page 1 of /s");
    CHECK(stale.header("x-cache-status") == "STALE");
    std::this_thread::sleep_for(3s);  // past max-age + stale_if_error
    Response gone = setup.get("/s");
    CHECK(gone.status == 502);
    CHECK(setup.cache_requests("stale") == 1);
}

TEST_CASE("cache: Vary variants are kept apart", "[cache]") {
    Setup setup([](const ReceivedRequest& request) {
        return Reply::text(200, "in " + request.header("accept-language"),
                           "Cache-Control: max-age=60\r\nVary: Accept-Language\r\n");
    });
    CHECK(setup.get("/v", "Accept-Language: en\r\n").body == "in en");
    CHECK(setup.get("/v", "Accept-Language: fr\r\n").body == "in fr");
    for (int i = 0; i < 3; ++i) {
        Response en = setup.get("/v", "Accept-Language: en\r\n");
        CHECK(en.body == "in en");
        CHECK(en.header("x-cache-status") == "HIT");
        CHECK(setup.get("/v", "Accept-Language: fr\r\n").body == "in fr");
    }
    CHECK(requests_for(*setup.upstream, "/v") == 2);
}

TEST_CASE("cache: a Set-Cookie response is never served to another client", "[cache]") {
    auto answered = std::make_shared<std::atomic<int>>(0);
    Setup setup([answered](const ReceivedRequest&) {
        std::string n = std::to_string(++*answered);
        return Reply::text(200, "yours " + n,
                           "Cache-Control: max-age=60\r\nSet-Cookie: session=" + n + "\r\n");
    });
    Response first = setup.get("/c");
    Response second = setup.get("/c");
    CHECK(first.header("set-cookie") == "session=1");
    CHECK(second.header("set-cookie") == "session=2");
    CHECK(second.body == "yours 2");
    CHECK(requests_for(*setup.upstream, "/c") == 2);
}

TEST_CASE("cache: a truncated body and one larger than the zone allows are never stored",
          "[cache]") {
    Setup setup(
        [](const ReceivedRequest& request) {
            if (request.target == "/big") return Reply::pattern(300 * 1024);
            if (request.target != "/cut") return Reply::text(200, "fine");
            return Reply::raw(
                "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nCache-Control: "
                "max-age=60\r\n\r\nonly part of it",
                Reply::Then::close);
        },
        "", "memory = \"1MiB\"\n");
    for (int i = 0; i < 2; ++i) {
        std::optional<Response> cut = proxy_fetch(setup.portico.port(), get_request("/cut"), 5s);
        CHECK((!cut || cut->body.size() < 100));
    }
    CHECK(requests_for(*setup.upstream, "/cut") == 2);
    for (int i = 0; i < 2; ++i) {
        Response big = setup.get("/big");
        CHECK(big.body == pattern_bytes(0, 300 * 1024));
    }
    CHECK(requests_for(*setup.upstream, "/big") == 2);
    CHECK(setup.get("/after").status == 200);  // still serving
}

TEST_CASE("cache: 304, 206 and HEAD answered from the cache", "[cache]") {
    Setup setup([](const ReceivedRequest&) {
        return Reply::text(200, "0123456789",
                           "Cache-Control: max-age=60\r\nETag: \"v1\"\r\n"
                           "Last-Modified: Tue, 01 Dec 2026 10:00:00 GMT\r\n");
    });
    CHECK(setup.get("/r").body == "0123456789");
    Response not_modified = setup.get("/r", "If-None-Match: \"v1\"\r\n");
    CHECK(not_modified.status == 304);
    CHECK(not_modified.body.empty());
    CHECK(not_modified.header("etag") == "\"v1\"");
    CHECK(setup.get("/r", "If-None-Match: \"v0\"\r\n").status == 200);
    CHECK(setup.get("/r", "If-Modified-Since: Wed, 02 Dec 2026 10:00:00 GMT\r\n").status == 304);
    Response part = setup.get("/r", "Range: bytes=2-4\r\n");
    CHECK(part.status == 206);
    CHECK(part.body == "234");
    CHECK(part.header("content-range") == "bytes 2-4/10");
    CHECK(setup.get("/r", "Range: bytes=20-\r\n").status == 416);
    Response head = setup.get("/r", "", "HEAD");
    CHECK(head.status == 200);
    CHECK(head.header("content-length") == "10");
    CHECK(head.body.empty());
    CHECK(head.header("x-cache-status") == "HIT");
    CHECK(requests_for(*setup.upstream, "/r") == 1);
}

TEST_CASE("cache: a hit over HTTP/2", "[cache]") {
    Setup setup(counting_pages());
    CHECK(setup.get("/h2").body == "page 1 of /h2");
    h2::Client client(setup.portico.port());
    uint32_t first = client.get("/h2", {}, "GET", "front.example");
    uint32_t second = client.get("/h2", {}, "GET", "front.example");
    REQUIRE(client.wait_streams({first, second}));
    for (uint32_t id : {first, second}) {
        const h2::StreamResult& result = client.result(id);
        CHECK(result.status == 200);
        CHECK(result.body == "page 1 of /h2");
        CHECK(result.header("x-cache-status") == "HIT");
    }
    // A miss over HTTP/2 is stored too.
    uint32_t miss = client.get("/h2-miss", {}, "GET", "front.example");
    REQUIRE(client.wait_stream(miss));
    CHECK(client.result(miss).header("x-cache-status") == "MISS");
    CHECK(setup.get("/h2-miss").header("x-cache-status") == "HIT");
    CHECK(requests_for(*setup.upstream, "/h2") == 1);
}

// The memfds a process holds for hit bodies (cache/cached_object.hpp).
int body_files_of(pid_t pid) {
    int count = 0;
    std::error_code error;
    for (const auto& entry :
         std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", error)) {
        std::error_code link_error;
        std::string target = std::filesystem::read_symlink(entry.path(), link_error).string();
        count += target.find("memfd:portico-cache-body") != std::string::npos;
    }
    return count;
}

TEST_CASE(
    "cache: a large body's hit is sent from the worker's memfd, whole, in ranges, over HTTP/2",
    "[cache]") {
    const std::string body = pattern_bytes(0, 100 * 1024);
    Setup setup([body](const ReceivedRequest&) {
        return Reply::text(200, body, "Cache-Control: max-age=60\r\n");
    });
    CHECK(setup.get("/big").header("x-cache-status") == "MISS");
    // New connections: both workers answer hits, and copy the object once each.
    for (int i = 0; i < 6; ++i) {
        Response hit = setup.get("/big");
        CHECK(hit.header("x-cache-status") == "HIT");
        CHECK(hit.body == body);
    }
    int body_files = 0;
    for (pid_t worker : setup.portico.worker_pids()) body_files += body_files_of(worker);
    CHECK(body_files >= 1);
    Response part = setup.get("/big", "Range: bytes=50000-50099\r\n");
    CHECK(part.status == 206);
    CHECK(part.body == body.substr(50000, 100));
    CHECK(part.header("content-range") == "bytes 50000-50099/102400");
    Response tail = setup.get("/big", "Range: bytes=-10\r\n");
    CHECK(tail.body == body.substr(body.size() - 10));
    Response head = setup.get("/big", "", "HEAD");
    CHECK(head.header("content-length") == "102400");
    CHECK(head.body.empty());
    h2::Client client(setup.portico.port());
    uint32_t whole = client.get("/big", {}, "GET", "front.example");
    uint32_t range = client.get("/big", {{"range", "bytes=100-199"}}, "GET", "front.example");
    REQUIRE(client.wait_streams({whole, range}));
    CHECK(client.result(whole).body == body);
    CHECK(client.result(whole).header("x-cache-status") == "HIT");
    CHECK(client.result(range).status == 206);
    CHECK(client.result(range).body == body.substr(100, 100));
    CHECK(requests_for(*setup.upstream, "/big") == 1);
    CHECK(setup.get("/after").status == 200);  // still serving
}

TEST_CASE("cache: the hits' memfds stay within an eighth of the descriptor limit", "[cache]") {
    std::optional<Setup> setup;
    {
        DescriptorLimit limit(128);  // 16 memfds per worker at most
        setup.emplace(
            [](const ReceivedRequest& request) {
                return Reply::text(200, pattern_bytes(request.target.size(), 20 * 1024),
                                   "Cache-Control: max-age=60\r\n");
            },
            "", "memory = \"4MiB\"\n");
    }
    for (int round = 0; round < 3; ++round) {
        for (int i = 0; i < 40; ++i) {
            std::string target = "/obj/" + std::to_string(i);
            Response response = setup->get(target);
            REQUIRE(response.status == 200);
            CHECK(response.body == pattern_bytes(target.size(), 20 * 1024));
        }
    }
    int most = 0;
    for (pid_t worker : setup->portico.worker_pids()) most = std::max(most, body_files_of(worker));
    CHECK(most >= 1);
    CHECK(most <= 16);
    CHECK(setup->upstream->request_count() == 40);  // every object stored once
    CHECK(setup->get("/after").status == 200);
}

TEST_CASE("cache: a large body's hit from the memfd is compressed like any other", "[cache]") {
    std::string text;
    while (text.size() < 64 * 1024) text += "line " + std::to_string(text.size()) + " of a page\n";
    UpstreamServer upstream([text](const ReceivedRequest&) {
        return Reply::text(200, text, "Cache-Control: max-age=60\r\n");
    });
    std::string config = cache_config(upstream.address(), unused_port());
    config.replace(config.find("cache = {"), 0, "compress = true\n");
    Portico portico(config);
    for (const char* coding : {"", "gzip", "", "gzip", "br"}) {
        std::optional<Response> response = fetch_encoded(portico.port(), "/z", coding);
        REQUIRE(response);
        CHECK(response->header("content-encoding") == coding);
        if (*coding == '\0')
            CHECK(response->body == text);
        else
            CHECK(decode_body(coding, response->body) == text);
    }
    CHECK(upstream.request_count() == 1);
}

TEST_CASE("cache: purge by key and by prefix on the metrics listener", "[cache]") {
    Setup setup(counting_pages());
    for (const char* target : {"/p/1", "/p/2", "/q"}) setup.get(target);
    auto purge = [&](const std::string& query) {
        std::optional<Response> response = proxy_fetch(
            setup.metrics_port,
            "POST /cache/purge" + query + " HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
        REQUIRE(response);
        return *response;
    };
    Response by_key = purge("?key=httpfront.example%2Fp%2F1");
    CHECK(by_key.status == 200);
    CHECK(by_key.body == "{\"purged\": 1}");
    CHECK(setup.get("/p/1").body == "page 4 of /p/1");
    CHECK(setup.get("/p/2").header("x-cache-status") == "HIT");
    CHECK(purge("?prefix=httpfront.example/p/").body == "{\"purged\": 2}");
    CHECK(setup.get("/p/2").header("x-cache-status") == "MISS");
    CHECK(setup.get("/q").header("x-cache-status") == "HIT");
    CHECK(purge("").status == 400);
    CHECK(purge("?key=bad%zz").status == 400);
    CHECK(purge("?key=").status == 400);
    CHECK(setup.get("/q").status == 200);  // still serving
}

TEST_CASE("cache: the zone stays within its memory under many distinct keys", "[cache]") {
    Setup setup(
        [](const ReceivedRequest& request) {
            return Reply::text(200, std::string(3000, 'x') + request.target,
                               "Cache-Control: max-age=60\r\n");
        },
        "", "memory = \"256KiB\"\n");
    for (int i = 0; i < 150; ++i) CHECK(setup.get("/k" + std::to_string(i)).status == 200);
    double bytes = metric(setup.metrics_port, "portico_cache_bytes{zone=\"pages\"}");
    double objects = metric(setup.metrics_port, "portico_cache_objects{zone=\"pages\"}");
    CHECK(bytes > 0);
    CHECK(bytes <= 256 * 1024);
    CHECK(objects > 10);
    CHECK(objects < 64);
    // The newest are hits, the oldest were evicted.
    CHECK(setup.get("/k149").header("x-cache-status") == "HIT");
    CHECK(setup.get("/k0").header("x-cache-status") == "MISS");
}

TEST_CASE("cache: stale_while_revalidate answers the stale page while one request refreshes it",
          "[cache]") {
    auto answered = std::make_shared<std::atomic<int>>(0);
    Setup setup(
        [answered](const ReceivedRequest&) {
            // The first stored stale already (Age equal to max-age); its
            // refresh slow.
            int n = ++*answered;
            if (n == 1)
                return Reply::text(200, "page 1", "Cache-Control: max-age=60\r\nAge: 60\r\n");
            return Reply::text(200, "page " + std::to_string(n), "Cache-Control: max-age=60\r\n")
                .delayed(600ms);
        },
        ", stale_while_revalidate = \"30s\"");
    CHECK(setup.get("/w").body == "page 1");
    // The first request to find it stale gets it at once too (nginx's
    // proxy_cache_background_update); the refresh runs in the background.
    Response first = setup.get("/w");
    CHECK(first.body == "page 1");
    CHECK(first.header("x-cache-status") == "STALE");
    REQUIRE(UpstreamServer::wait_until([&] { return setup.upstream->request_count() == 2; }, 2s));
    auto start = std::chrono::steady_clock::now();
    Response meanwhile = setup.get("/w");
    CHECK(meanwhile.body == "page 1");
    CHECK(meanwhile.header("x-cache-status") == "UPDATING");
    CHECK(std::chrono::steady_clock::now() - start < 400ms);  // not held for the refresh
    REQUIRE(UpstreamServer::wait_until([&] { return setup.get("/w").body == "page 2"; }, 3s));
    CHECK(setup.get("/w").header("x-cache-status") == "HIT");
    CHECK(setup.upstream->request_count() == 2);
}

TEST_CASE("cache: a reload keeps an unchanged zone, and the access log says cache=", "[cache]") {
    TempDir logs;
    auto upstream = std::make_unique<UpstreamServer>(counting_pages());
    uint16_t metrics_port = unused_port();
    std::string config = cache_config(upstream->address(), metrics_port) + "\n[log]\naccess = \"" +
                         logs.path() + "/access.log\"\n";
    Portico portico(config);
    auto get = [&](const std::string& target) {
        std::optional<Response> response = proxy_fetch(portico.port(), get_request(target));
        REQUIRE(response);
        return *response;
    };
    CHECK(get("/kept").header("x-cache-status") == "MISS");
    portico.signal(SIGHUP);
    REQUIRE(portico.wait_for_log("reloaded"));
    std::this_thread::sleep_for(200ms);
    for (int i = 0; i < 4; ++i) CHECK(get("/kept").header("x-cache-status") == "HIT");
    CHECK(upstream->request_count() == 1);
    REQUIRE(UpstreamServer::wait_until(
        [&] { return contains(read_text(logs.path() + "/access.log"), "cache=HIT"); }, 3s));
    CHECK(contains(read_text(logs.path() + "/access.log"), "cache=MISS"));
}

TEST_CASE("cache: with compress, the object is stored once and each client gets its coding",
          "[cache]") {
    std::string text;
    for (int i = 0; i < 200; ++i)
        text += "line " + std::to_string(i) + " of a page worth compressing\n";
    UpstreamServer upstream([text](const ReceivedRequest&) {
        return Reply::text(200, text, "Cache-Control: max-age=60\r\n");
    });
    uint16_t metrics_port = unused_port();
    std::string config = cache_config(upstream.address(), metrics_port);
    config.replace(config.find("cache = {"), 0, "compress = true\n");
    Portico portico(config);
    std::optional<Response> gzipped = fetch_encoded(portico.port(), "/z", "gzip");
    REQUIRE(gzipped);
    CHECK(gzipped->header("content-encoding") == "gzip");
    CHECK(gzipped->header("x-cache-status") == "MISS");
    CHECK(decode_body("gzip", gzipped->body) == text);
    std::optional<Response> plain = fetch_encoded(portico.port(), "/z", "");
    REQUIRE(plain);
    CHECK(plain->header("content-encoding").empty());
    CHECK(plain->header("x-cache-status") == "HIT");
    CHECK(plain->body == text);
    std::optional<Response> again = fetch_encoded(portico.port(), "/z", "br");
    REQUIRE(again);
    CHECK(again->header("content-encoding") == "br");
    CHECK(decode_body("br", again->body) == text);
    CHECK(upstream.request_count() == 1);
}

TEST_CASE("cache: a file of a root and proxy location is not the cache's business", "[cache]") {
    TempDir www;
    www.write("file.txt", "from disk\n");
    UpstreamServer upstream(counting_pages());
    uint16_t metrics_port = unused_port();
    std::string config = cache_config(upstream.address(), metrics_port);
    config.replace(config.find("proxy = \"app\""), 0, "root = \"" + www.path() + "\"\n");
    Portico portico(config);
    std::optional<Response> file = proxy_fetch(portico.port(), get_request("/file.txt"));
    REQUIRE(file);
    CHECK(file->body == "from disk\n");
    CHECK(file->header("x-cache-status").empty());
    for (int i = 0; i < 2; ++i) {
        std::optional<Response> page = proxy_fetch(portico.port(), get_request("/page"));
        REQUIRE(page);
        CHECK(page->body == "page 1 of /page");
    }
    CHECK(upstream.request_count() == 1);
}

TEST_CASE("cache: a lock waiter goes upstream after lock_timeout, and one that leaves is forgotten",
          "[cache]") {
    auto answered = std::make_shared<std::atomic<int>>(0);
    Setup setup(
        [answered](const ReceivedRequest&) {
            int n = ++*answered;
            return Reply::text(200, "page " + std::to_string(n), "Cache-Control: max-age=60\r\n")
                .delayed(n == 1 ? 1500ms : 0ms);
        },
        ", lock = true, lock_timeout = \"300ms\"");
    auto slow = std::async(std::launch::async, [&setup] { return setup.get("/t"); });
    REQUIRE(UpstreamServer::wait_until([&] { return setup.upstream->request_count() == 1; }, 2s));
    // A waiter that leaves at once: nothing answers it, nothing breaks.
    {
        Client leaving(setup.portico.port());
        leaving.send(get_request("/t"));
        std::this_thread::sleep_for(50ms);
    }
    auto start = std::chrono::steady_clock::now();
    Response waited = setup.get("/t");
    auto took = std::chrono::steady_clock::now() - start;
    // Its own request upstream once the first's lock lapsed (lock_timeout
    // after the first took it), not held until the first is answered.
    CHECK(waited.body == "page 2");
    CHECK(took >= 150ms);
    CHECK(took < 1200ms);
    CHECK(slow.get().body == "page 1");
    CHECK(setup.get("/t").body == "page 1");      // the last stored
    CHECK(setup.upstream->request_count() == 2);  // none for the client that left
}

TEST_CASE(
    "cache: an invalid Cache-Control, an enormous Vary, private and no-store are never "
    "stored",
    "[cache]") {
    std::string vary = "Vary: ";
    for (int i = 0; i < 40; ++i) vary += (i ? ", X-Field-" : "X-Field-") + std::to_string(i);
    Setup setup(
        [vary](const ReceivedRequest& request) {
            std::string extra =
                request.target == "/bad"       ? "Cache-Control: max-age=soon\r\n"
                : request.target == "/vary"    ? "Cache-Control: max-age=60\r\n" + vary + "\r\n"
                : request.target == "/private" ? "Cache-Control: private, max-age=60\r\n"
                                               : "Cache-Control: no-store\r\n";
            return Reply::text(200, "for " + request.target, extra);
        },
        ", valid = { 200 = \"1m\" }");
    for (const char* target : {"/bad", "/vary", "/private", "/nostore"}) {
        for (int i = 0; i < 2; ++i) {
            Response response = setup.get(target);
            CHECK(response.status == 200);
            CHECK(response.body == std::string("for ") + target);
            CHECK(response.header("x-cache-status") == "MISS");
        }
        CHECK(requests_for(*setup.upstream, target) == 2);
    }
}

TEST_CASE("cache: a HEAD, Range or conditional miss fetches the whole object as a GET", "[cache]") {
    Setup setup([](const ReceivedRequest& request) {
        // What the upstream was asked, in the body, so the test sees it.
        std::string asked = request.method + " range=" + request.header("range") +
                            " inm=" + request.header("if-none-match");
        return Reply::text(200, asked, "Cache-Control: max-age=60\r\nETag: \"e\"\r\n");
    });
    Response head = setup.get("/head", "", "HEAD");
    CHECK(head.status == 200);
    CHECK(head.body.empty());
    CHECK(head.header("x-cache-status") == "MISS");
    Response after_head = setup.get("/head");
    CHECK(after_head.header("x-cache-status") == "HIT");
    CHECK(after_head.body == "GET range= inm=");

    Response range = setup.get("/range", "Range: bytes=0-2\r\n");
    CHECK(range.status == 200);  // the whole, as RFC 9110 lets a server answer a Range
    CHECK(range.body == "GET range= inm=");
    Response range_hit = setup.get("/range", "Range: bytes=0-2\r\n");
    CHECK(range_hit.status == 206);
    CHECK(range_hit.body == "GET");

    Response conditional = setup.get("/cond", "If-None-Match: \"e\"\r\n");
    CHECK(conditional.status == 200);
    CHECK(conditional.body == "GET range= inm=");
    CHECK(setup.get("/cond", "If-None-Match: \"e\"\r\n").status == 304);
    CHECK(setup.upstream->request_count() == 3);
}

}  // namespace cache_test
