// The response cache's disk tier with the real binary, two workers and a
// real upstream that counts its requests: a hit read back from disk after
// the small memory tier evicted it (HTTP/1.1 and HTTP/2), a new process on
// the same folder that answers from disk without asking the upstream,
// max_size holding under many keys (the bytes in the folder), truncated,
// corrupt and foreign files never served, a folder that cannot be written
// (every request still answered, the error logged once a second), and purge
// deleting the files.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "harness.hpp"
#include "http2_support.hpp"
#include "proxy_support.hpp"
#include "upstream_server.hpp"

using namespace portico::test;
namespace fs = std::filesystem;

namespace cache_disk_test {

namespace {

// "page N of TARGET" (N counts the upstream's answers), fresh for a minute,
// padded to `size` bytes with a tail of 'x' (a body of a block or more).
Behaviour padded_pages(size_t size = 3000) {
    auto answered = std::make_shared<std::atomic<int>>(0);
    return [answered, size](const ReceivedRequest& request) {
        std::string body = "page " + std::to_string(++*answered) + " of " + request.target + " ";
        body.resize(std::max(size, body.size()), 'x');
        return Reply::text(200, body, "Cache-Control: max-age=60\r\n");
    };
}

std::string page(int n, const std::string& target, size_t size = 3000) {
    std::string body = "page " + std::to_string(n) + " of " + target + " ";
    body.resize(std::max(size, body.size()), 'x');
    return body;
}

// The disk tier's files under `root` (temporary ones apart) and their bytes.
struct Files {
    std::vector<fs::path> paths;
    uint64_t bytes = 0;
    bool has_temporary = false;
};

Files files_under(const std::string& root) {
    Files files;
    std::error_code error;
    for (fs::recursive_directory_iterator it(root, error), end; !error && it != end;
         it.increment(error)) {
        if (!it->is_regular_file(error)) continue;
        if (it->path().filename().string().find(".tmp.") != std::string::npos) {
            files.has_temporary = true;
            continue;
        }
        files.paths.push_back(it->path());
        files.bytes += it->file_size(error);
    }
    return files;
}

// The file holding `key` (its key text follows the header).
std::optional<fs::path> file_of(const std::string& root, const std::string& key) {
    for (const fs::path& path : files_under(root).paths)
        if (contains(read_text(path.string()), key)) return path;
    return std::nullopt;
}

bool wait_for_files(const std::string& root, size_t count) {
    return UpstreamServer::wait_until([&] { return files_under(root).paths.size() >= count; }, 5s);
}

size_t requests_for(const UpstreamServer& upstream, const std::string& target) {
    size_t count = 0;
    for (const ReceivedRequest& request : upstream.requests()) count += request.target == target;
    return count;
}

std::string disk_config(const std::string& upstream, uint16_t metrics_port,
                        const std::string& folder, const std::string& zone_extra,
                        const std::string& memory) {
    return with_metrics(
        "[server]\nlisten = [\"{listen}\"]\nworkers = 2\n\n[http2]\ncleartext = "
        "true\n\n[cache.pages]\nmemory = \"" +
            memory + "\"\npath = \"" + folder + "\"\n" + zone_extra +
            "\n[upstream.app]\nservers = [\"" + upstream +
            "\"]\n\n[[location]]\nprefix = \"/\"\nproxy = \"app\"\n"
            "cache = { zone = \"pages\", status_header = \"X-Cache-Status\" }\n",
        metrics_port);
}

struct Setup {
    explicit Setup(Behaviour behaviour, const std::string& zone_extra = "")
        : upstream(std::make_unique<UpstreamServer>(std::move(behaviour))),
          folder(cache_dir.path() + "/pages"),
          zone_extra(zone_extra) {
        start();
    }
    void start() {
        metrics_port = unused_port();
        portico = std::make_unique<Portico>(
            disk_config(upstream->address(), metrics_port, folder, zone_extra, memory));
    }
    // The whole process stopped (SIGTERM), then a new one on the same folder.
    void restart() {
        portico->signal(SIGTERM);
        REQUIRE(portico->wait_exit(10s));
        portico.reset();
        start();
    }
    Response get(const std::string& target, const std::string& extra = "") {
        std::optional<Response> response = proxy_fetch(portico->port(), get_request(target, extra));
        REQUIRE(response);
        return *response;
    }
    Response purge(const std::string& query) {
        std::optional<Response> response =
            proxy_fetch(metrics_port, "POST /cache/purge" + query +
                                          " HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
        REQUIRE(response);
        return *response;
    }

    TempDir cache_dir;
    std::unique_ptr<UpstreamServer> upstream;
    std::string folder;
    std::string zone_extra;
    std::string memory = "256KiB";
    uint16_t metrics_port = 0;
    std::unique_ptr<Portico> portico;
};

}  // namespace

TEST_CASE("cache-disk: an object pushed out of memory is a hit from disk", "[cache-disk]") {
    Setup setup(padded_pages());
    CHECK(setup.get("/d0").header("x-cache-status") == "MISS");
    CHECK(setup.get("/d1").header("x-cache-status") == "MISS");
    REQUIRE(wait_for_files(setup.folder, 2));
    // 256 KiB of memory holds about 60 objects of a block: these push the
    // first two out.
    for (int i = 2; i < 100; ++i) CHECK(setup.get("/d" + std::to_string(i)).status == 200);
    Response from_disk = setup.get("/d0");
    CHECK(from_disk.status == 200);
    CHECK(from_disk.header("x-cache-status") == "HIT");
    CHECK(from_disk.body == page(1, "/d0"));
    CHECK(requests_for(*setup.upstream, "/d0") == 1);
    // Back in memory: the other worker hits it there.
    for (int i = 0; i < 4; ++i) CHECK(setup.get("/d0").header("x-cache-status") == "HIT");

    // Over HTTP/2 too.
    h2::Client client(setup.portico->port());
    uint32_t stream = client.get("/d1", {}, "GET", "front.example");
    REQUIRE(client.wait_stream(stream));
    CHECK(client.result(stream).status == 200);
    CHECK(client.result(stream).header("x-cache-status") == "HIT");
    CHECK(client.result(stream).body == page(2, "/d1"));
    CHECK(requests_for(*setup.upstream, "/d1") == 1);
}

TEST_CASE("cache-disk: Vary variants come back from disk apart", "[cache-disk]") {
    Setup setup([](const ReceivedRequest& request) {
        std::string body = "in " + request.header("accept-language") + " ";
        body.resize(3000, 'x');
        return Reply::text(200, body, "Cache-Control: max-age=60\r\nVary: Accept-Language\r\n");
    });
    std::string en_body = setup.get("/v", "Accept-Language: en\r\n").body;
    std::string fr_body = setup.get("/v", "Accept-Language: fr\r\n").body;
    CHECK(en_body.starts_with("in en "));
    CHECK(fr_body.starts_with("in fr "));
    // The marker and two variants.
    REQUIRE(wait_for_files(setup.folder, 3));
    for (int i = 0; i < 100; ++i) CHECK(setup.get("/fill" + std::to_string(i)).status == 200);
    Response fr = setup.get("/v", "Accept-Language: fr\r\n");
    CHECK(fr.header("x-cache-status") == "HIT");
    CHECK(fr.body == fr_body);
    Response en = setup.get("/v", "Accept-Language: en\r\n");
    CHECK(en.header("x-cache-status") == "HIT");
    CHECK(en.body == en_body);
    CHECK(requests_for(*setup.upstream, "/v") == 2);
}

TEST_CASE("cache-disk: a new process on the same folder answers from disk", "[cache-disk]") {
    Setup setup(padded_pages());
    CHECK(setup.get("/kept").header("x-cache-status") == "MISS");
    CHECK(setup.get("/kept-h2").header("x-cache-status") == "MISS");
    REQUIRE(wait_for_files(setup.folder, 2));
    setup.restart();
    REQUIRE(setup.portico->wait_for_log("the disk loader indexed 2 objects"));
    Response kept = setup.get("/kept");
    CHECK(kept.header("x-cache-status") == "HIT");
    CHECK(kept.body == page(1, "/kept"));
    h2::Client client(setup.portico->port());
    uint32_t stream = client.get("/kept-h2", {}, "GET", "front.example");
    REQUIRE(client.wait_stream(stream));
    CHECK(client.result(stream).header("x-cache-status") == "HIT");
    CHECK(client.result(stream).body == page(2, "/kept-h2"));
    CHECK(setup.upstream->request_count() == 2);
    // A reload keeps the index: no second loader, still a hit.
    setup.portico->signal(SIGHUP);
    REQUIRE(setup.portico->wait_for_log("reloaded"));
    std::this_thread::sleep_for(200ms);
    CHECK(setup.get("/kept").header("x-cache-status") == "HIT");
    CHECK(setup.upstream->request_count() == 2);
    std::string log = setup.portico->log();
    CHECK(log.find("the disk loader indexed") == log.rfind("the disk loader indexed"));
}

TEST_CASE("cache-disk: max_size holds under many distinct keys", "[cache-disk]") {
    Setup setup(padded_pages(20000), "max_size = \"1MiB\"\n");
    for (int i = 0; i < 120; ++i) CHECK(setup.get("/m" + std::to_string(i)).status == 200);
    // Every write done: no temporary file, and the index's count is the
    // folder's (a write in flight makes them differ).
    uint64_t settled = 0;
    REQUIRE(UpstreamServer::wait_until(
        [&] {
            Files now = files_under(setup.folder);
            settled = now.bytes;
            return !now.has_temporary &&
                   metric(setup.metrics_port, "portico_cache_disk_bytes{zone=\"pages\"}") ==
                       static_cast<double>(now.bytes);
        },
        5s));
    CHECK(settled <= 1024 * 1024);
    CHECK(settled > 512 * 1024);
    CHECK(metric(setup.metrics_port, "portico_cache_disk_objects{zone=\"pages\"}") ==
          static_cast<double>(files_under(setup.folder).paths.size()));
    // The oldest went from both tiers; a recent one out of memory is on disk.
    CHECK(setup.get("/m0").header("x-cache-status") == "MISS");
    Response recent = setup.get("/m100");
    CHECK(recent.header("x-cache-status") == "HIT");
    CHECK(recent.body == page(101, "/m100", 20000));
}

TEST_CASE("cache-disk: truncated, corrupt and foreign files are never served", "[cache-disk]") {
    Setup setup(padded_pages());
    CHECK(setup.get("/truncated").status == 200);
    CHECK(setup.get("/corrupt").status == 200);
    REQUIRE(wait_for_files(setup.folder, 2));
    setup.portico->signal(SIGTERM);
    REQUIRE(setup.portico->wait_exit(10s));
    std::optional<fs::path> truncated = file_of(setup.folder, "httpfront.example/truncated");
    std::optional<fs::path> corrupt = file_of(setup.folder, "httpfront.example/corrupt");
    REQUIRE(truncated);
    REQUIRE(corrupt);
    fs::resize_file(*truncated, fs::file_size(*truncated) - 100);
    {
        // One byte of the body changed: same size, the checksum fails.
        std::fstream file(*corrupt, std::ios::in | std::ios::out | std::ios::binary);
        file.seekp(-1, std::ios::end);
        file.put('y');
    }
    // A file of another layout where a key's would be.
    fs::path foreign = fs::path(setup.folder) / "00" / "00" / "00000000000000000000000000000000";
    fs::create_directories(foreign.parent_path());
    std::ofstream(foreign) << "not a cache file";
    setup.start();
    // The truncated and foreign files fail the loader's header check; the
    // corrupt one its read.
    REQUIRE(setup.portico->wait_for_log("and deleted 2 files"));
    CHECK(!fs::exists(*truncated));
    CHECK(!fs::exists(foreign));
    Response again = setup.get("/truncated");
    CHECK(again.header("x-cache-status") == "MISS");
    CHECK(again.body == page(3, "/truncated"));
    Response reread = setup.get("/corrupt");
    CHECK(reread.header("x-cache-status") == "MISS");
    CHECK(reread.body == page(4, "/corrupt"));
    CHECK(requests_for(*setup.upstream, "/corrupt") == 2);
    CHECK(setup.get("/corrupt").body == page(4, "/corrupt"));
}

TEST_CASE("cache-disk: after a restart with less memory, an object too large for it is a miss",
          "[cache-disk]") {
    Setup setup(padded_pages(100000));
    setup.memory = "1MiB";
    setup.restart();
    CHECK(setup.get("/large").header("x-cache-status") == "MISS");
    REQUIRE(wait_for_files(setup.folder, 1));
    setup.memory = "256KiB";  // its largest object: about 54 KiB
    setup.restart();
    REQUIRE(setup.portico->wait_for_log("the disk loader indexed 1 objects"));
    auto started = std::chrono::steady_clock::now();
    Response large = setup.get("/large");
    // At once (not after lock_timeout's 5 s of reading it again and again).
    CHECK(std::chrono::steady_clock::now() - started < 2s);
    CHECK(large.header("x-cache-status") == "MISS");
    CHECK(large.body == page(2, "/large", 100000));
    CHECK(files_under(setup.folder).paths.empty());
    CHECK(setup.get("/large").body == page(3, "/large", 100000));
}

TEST_CASE("cache-disk: a folder that cannot be written fails no request", "[cache-disk]") {
    Setup setup(padded_pages());
    CHECK(setup.get("/before").status == 200);
    REQUIRE(wait_for_files(setup.folder, 1));
    // chmod does not stop root: the folder is replaced by a file.
    fs::rename(setup.folder, setup.folder + ".gone");
    std::ofstream(setup.folder) << "in the way";
    for (int round = 0; round < 2; ++round) {
        for (int i = 0; i < 20; ++i) {
            std::string target = "/w" + std::to_string(round) + "-" + std::to_string(i);
            Response response = setup.get(target);
            CHECK(response.status == 200);
            CHECK(contains(response.body, " of " + target + " "));
        }
        std::this_thread::sleep_for(1100ms);
    }
    // Still cached in memory.
    CHECK(setup.get("/w1-19").header("x-cache-status") == "HIT");
    REQUIRE(setup.portico->wait_for_log("cannot write to disk"));
    std::string log = setup.portico->log();
    size_t lines = 0;
    for (size_t at = log.find("cannot write to disk"); at != std::string::npos;
         at = log.find("cannot write to disk", at + 1))
        ++lines;
    // 40 failed writes, two workers, a little over two seconds: a few lines.
    CHECK(lines >= 2);
    CHECK(lines <= 6);
    CHECK(contains(log, "Not a directory"));
    CHECK(contains(log, "(0 more write errors"));
    bool counted = false;
    for (int n = 1; n <= 20; ++n)
        counted = counted || contains(log, "(" + std::to_string(n) + " more write errors");
    CHECK(counted);
}

TEST_CASE("cache-disk: purge deletes the files", "[cache-disk]") {
    Setup setup(padded_pages());
    for (const char* target : {"/p/1", "/p/2", "/q"}) setup.get(target);
    REQUIRE(wait_for_files(setup.folder, 3));
    Response by_key = setup.purge("?key=httpfront.example%2Fp%2F1");
    CHECK(by_key.body == "{\"purged\": 1}");
    CHECK(!file_of(setup.folder, "httpfront.example/p/1"));
    CHECK(files_under(setup.folder).paths.size() == 2);
    // Out of memory, on disk only: purged all the same.
    for (int i = 0; i < 100; ++i) CHECK(setup.get("/fill" + std::to_string(i)).status == 200);
    REQUIRE(wait_for_files(setup.folder, 102));
    CHECK(setup.purge("?prefix=httpfront.example/p/").body == "{\"purged\": 1}");
    CHECK(!file_of(setup.folder, "httpfront.example/p/2"));
    CHECK(file_of(setup.folder, "httpfront.example/q"));
    CHECK(setup.get("/p/2").header("x-cache-status") == "MISS");
    CHECK(setup.get("/p/1").header("x-cache-status") == "MISS");
}

}  // namespace cache_disk_test
