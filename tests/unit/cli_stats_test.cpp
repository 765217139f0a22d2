#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/compare_table.hpp"
#include "cli/stats_command.hpp"
#include "config/config.hpp"
#include "metrics/compare.hpp"
#include "metrics/render.hpp"
#include "metrics/saved_snapshots.hpp"
#include "metrics/shared_counters.hpp"
#include "durations.hpp"
#include "request_records.hpp"

using namespace portico::metrics;
using nlohmann::json;
using portico::cli::render_compare_table;
using portico::cli::render_stats_table;
using portico::cli::run_stats_command;

using portico::test::proxied_request;

namespace {

// Two locations, one upstream with two servers, as a real config would
// register them.
portico::config::Config sample_config() {
    portico::config::Config config;
    config.server.workers = 1;
    for (const char* name : {"/", "assets"}) {
        portico::config::LocationConfig location;
        location.name = name;
        config.locations.push_back(location);
    }
    portico::config::UpstreamConfig upstream;
    upstream.name = "app";
    for (const char* text : {"127.0.0.1:3000", "127.0.0.1:3001"}) {
        portico::config::SocketAddress address;
        address.text = text;
        upstream.servers.push_back(address);
    }
    config.upstreams.push_back(upstream);
    return config;
}

RequestRecord from_file(int status, uint64_t bytes) {
    return {
        .status = status, .response_bytes = bytes, .sendfile_bytes = bytes, .duration_ns = 200'000};
}

// A running "portico" in miniature: the shared region, one worker's view of
// it, and /stats as the metrics listener renders it.
struct Portico {
    portico::config::Config config = sample_config();
    std::unique_ptr<SharedCounters> counters;
    std::unique_ptr<WorkerCounters> worker;

    Portico() {
        std::string error;
        counters = SharedCounters::create(capacity_for(config), error);
        REQUIRE(counters);
        REQUIRE(counters->register_names(config).empty());
        worker = std::make_unique<WorkerCounters>(
            counters->attach(counters->lease_slot(0).slot, config));
    }
    json stats() const { return json::parse(render_json(counters->snapshot())); }
};

std::vector<std::string> words(const std::string& line) {
    std::vector<std::string> out;
    std::istringstream in(line);
    for (std::string word; in >> word;) out.push_back(word);
    return out;
}

// The whitespace-split cells of the first line whose first cell is `name`.
std::vector<std::string> row(const std::string& table, const std::string& name) {
    std::istringstream in(table);
    for (std::string line; std::getline(in, line);) {
        std::vector<std::string> cells = words(line);
        if (!cells.empty() && cells[0] == name) return cells;
    }
    FAIL("no row for '" << name << "' in:\n" << table);
    return {};
}

// Location rows: name requests req/s 2xx 3xx 4xx 5xx rt-p50 rt-p99 urt-p50
// urt-p99 ovh-p50 ovh-p99 bytes unit (the bytes cell "2.34 KiB" is two words).
enum Column {
    requests = 1,
    per_second,
    c2xx,
    c3xx,
    c4xx,
    c5xx,
    rt50,
    rt99,
    urt50,
    urt99,
    ovh50,
    ovh99,
    bytes,
    bytes_unit
};

// A cell in milliseconds against the document's seconds, within the
// display's rounding.
void check_ms(const std::string& cell, double seconds) {
    INFO("cell " << cell << " vs " << seconds * 1000 << " ms");
    CHECK(std::stod(cell) == Approx(seconds * 1000).epsilon(0.01).margin(0.0006));
}

}  // namespace

TEST_CASE("stats: numbers from /stats land in their columns", "[stats]") {
    Portico portico;
    portico.worker->request_finished(0, proxied_request(200, 5 * ms, 3 * ms));
    portico.worker->request_finished(0, proxied_request(502, 40 * ms, 39 * ms));
    portico.worker->request_finished(0, proxied_request(404, 2 * ms, 1 * ms));
    portico.worker->request_finished(1, from_file(200, 1200));
    portico.worker->request_finished(1, from_file(304, 1200));
    portico.worker->request_finished(1, from_file(206, 1200));  // no counter of its own: "2xx"
    portico.worker->upstream_connected(0, 0, 300'000);
    portico.worker->upstream_request_sent(0, 0, false);
    portico.worker->upstream_request_sent(0, 0, true);
    portico.worker->upstream_request_sent(0, 0, true);
    portico.worker->upstream_failed(0, 1, UpstreamError::timeout);
    json current = portico.stats();

    std::string table = render_stats_table(json(), current, 0.0);
    INFO(table);
    std::vector<std::string> root = row(table, "/");
    REQUIRE(root.size() == 15);
    CHECK(root[requests] == "3");
    CHECK(root[per_second] == "-");  // one read: no rate yet
    CHECK(root[c2xx] == "1");
    CHECK(root[c3xx] == "0");
    CHECK(root[c4xx] == "1");
    CHECK(root[c5xx] == "1");
    const json& location = current["locations"][1];  // after "-"
    check_ms(root[rt50], location["request_duration"]["p50"]);
    check_ms(root[rt99], location["request_duration"]["p99"]);
    check_ms(root[urt50], location["upstream_duration"]["p50"]);
    check_ms(root[urt99], location["upstream_duration"]["p99"]);
    check_ms(root[ovh50], location["proxy_overhead"]["p50"]);
    check_ms(root[ovh99], location["proxy_overhead"]["p99"]);
    CHECK(std::stod(root[rt99]) > 30.0);  // the 40 ms request
    CHECK(root[bytes] == "300");
    CHECK(root[bytes_unit] == "B");

    std::vector<std::string> assets = row(table, "assets");
    REQUIRE(assets.size() == 15);
    CHECK(assets[requests] == "3");
    CHECK(assets[c2xx] == "2");  // 200 and 206
    CHECK(assets[c3xx] == "1");
    CHECK(assets[urt50] == "-");  // files: no upstream time, no overhead
    CHECK(assets[ovh99] == "-");
    CHECK(assets[bytes] == "3.52");  // 3600 bytes
    CHECK(assets[bytes_unit] == "KiB");

    std::vector<std::string> total = row(table, "total");
    REQUIRE(total.size() == 15);
    CHECK(total[requests] == "6");
    CHECK(total[c2xx] == "3");
    CHECK(total[c5xx] == "1");
    CHECK(total[bytes] == "3.81");  // 3900 bytes
    CHECK(total[bytes_unit] == "KiB");

    // upstream server requests req/s opened reused reuse idle p50 p99 errors...
    std::vector<std::string> first = row(table, "app");
    REQUIRE(first.size() == 11);
    CHECK(first[1] == "127.0.0.1:3000");
    CHECK(first[2] == "3");
    CHECK(first[4] == "1");    // opened
    CHECK(first[5] == "2");    // reused
    CHECK(first[6] == "67%");  // of its requests
    check_ms(first[8], current["upstream_servers"][0]["connect_time"]["p50"]);
    CHECK(first[10] == "0");
    size_t second_at = table.find("127.0.0.1:3001");
    REQUIRE(second_at != std::string::npos);
    std::vector<std::string> second =
        words(table.substr(second_at, table.find('\n', second_at) - second_at));
    CHECK(second[1] == "0");  // requests
    CHECK(second[5] == "-");  // reuse of no requests
    CHECK(second[7] == "-");  // never connected: no connect time
    CHECK(table.find("1 (timeout 1)\n") != std::string::npos);
}

TEST_CASE("stats: TLS handshakes by result and their time, under the summary", "[stats]") {
    Portico portico;
    std::string before = render_stats_table(json(), portico.stats(), 0.0);
    INFO(before);
    CHECK(before.find("\ntls handshakes 0 full, 0 resumed, 0 failed;  "
                      "handshake ms p50 -, p99 -\n") != std::string::npos);

    portico.worker->tls_handshake_finished(TlsHandshake::full, 2 * ms);
    portico.worker->tls_handshake_finished(TlsHandshake::full, 2 * ms);
    portico.worker->tls_handshake_finished(TlsHandshake::resumed, 1 * ms);
    portico.worker->tls_handshake_finished(TlsHandshake::failed, 0);
    json current = portico.stats();
    std::string table = render_stats_table(json(), current, 0.0);
    INFO(table);
    std::vector<std::string> tls = row(table, "tls");
    // tls handshakes 2 full, 1 resumed, 1 failed; handshake ms p50 X, p99 Y
    REQUIRE(tls.size() == 14);
    CHECK(tls[2] == "2");
    CHECK(tls[4] == "1");
    CHECK(tls[6] == "1");
    const json& time = current["totals"]["tls_handshake_time"];
    CHECK(time["count"] == 3);
    check_ms(tls[11].substr(0, tls[11].size() - 1), time["p50"]);  // "1.83,"
    check_ms(tls[13], time["p99"]);
}

TEST_CASE("stats: requests without a location, and the upstream queues", "[stats]") {
    Portico portico;
    portico.worker->request_finished(-1, from_file(404, 150));
    portico.worker->request_finished(-1, from_file(400, 150));
    portico.worker->request_finished(0, proxied_request(503, 5 * ms, 0));
    portico.worker->upstream_queue_changed(0, 2);
    portico.worker->upstream_queue_timed_out(0);

    std::string table = render_stats_table(json(), portico.stats(), 0.0);
    INFO(table);
    std::vector<std::string> none = row(table, "-");
    REQUIRE(none.size() == 15);
    CHECK(none[requests] == "2");
    CHECK(none[c4xx] == "2");
    CHECK(row(table, "total")[requests] == "3");  // "-" is in the totals

    size_t queues = table.find("upstream  queued  queue 503s\n");
    REQUIRE(queues != std::string::npos);
    size_t line = table.find('\n', queues) + 1;
    CHECK(words(table.substr(line, table.find('\n', line) - line)) ==
          std::vector<std::string>{"app", "2", "1"});
}

TEST_CASE("stats: req/s is the request delta over the interval", "[stats]") {
    Portico portico;
    for (int i = 0; i < 10; ++i) portico.worker->request_finished(0, proxied_request(200, ms, ms / 2));
    portico.worker->upstream_request_sent(0, 0, false);
    json previous = portico.stats();
    for (int i = 0; i < 30; ++i) portico.worker->request_finished(0, proxied_request(200, ms, ms / 2));
    for (int i = 0; i < 5; ++i) portico.worker->request_finished(1, from_file(200, 10));
    for (int i = 0; i < 8; ++i) portico.worker->upstream_request_sent(0, 0, true);
    json current = portico.stats();

    std::string table = render_stats_table(previous, current, 2.0);
    INFO(table);
    CHECK(row(table, "/")[requests] == "40");
    CHECK(row(table, "/")[per_second] == "15.0");  // 30 more in 2 s
    CHECK(row(table, "assets")[per_second] == "2.5");
    CHECK(row(table, "total")[per_second] == "17.5");
    std::vector<std::string> server = row(table, "app");
    CHECK(server[2] == "9");
    CHECK(server[3] == "4.0");  // 8 more upstream requests in 2 s

    // Counts that went down mean a reset (or a restart) in between: no rate.
    std::string after_reset = render_stats_table(current, previous, 2.0);
    CHECK(row(after_reset, "/")[per_second] == "-");

    // Hundreds per second print without decimals.
    for (int i = 0; i < 900; ++i) portico.worker->request_finished(0, proxied_request(200, ms, ms / 2));
    CHECK(row(render_stats_table(current, portico.stats(), 0.5), "/")[per_second] == "1800");
}

TEST_CASE("stats: an odd or empty document renders without throwing", "[stats]") {
    CHECK_NOTHROW(render_stats_table(json(), json::object(), 1.0));
    json odd = {{"totals", 7},
                {"locations", {{{"name", 3}, {"requests", "many"}, {"codes", {{"2xx", -1}}}}}},
                {"upstream_servers", "none"}};
    std::string table;
    CHECK_NOTHROW(table = render_stats_table(odd, odd, 1.0));
    CHECK(table.find("total") != std::string::npos);
}

namespace {

// Serves one HTTP response on 127.0.0.1 to the first connection.
class OneShotServer {
public:
    explicit OneShotServer(std::string response) {
        fd_ = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        REQUIRE(bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
        REQUIRE(listen(fd_, 1) == 0);
        socklen_t length = sizeof address;
        getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
        port_ = ntohs(address.sin_port);
        thread_ = std::thread([this, response = std::move(response)] {
            int client = accept(fd_, nullptr, nullptr);
            if (client < 0) return;
            std::string request;
            char buffer[4096];
            while (request.find("\r\n\r\n") == std::string::npos) {
                ssize_t n = read(client, buffer, sizeof buffer);
                if (n <= 0) break;
                request.append(buffer, static_cast<size_t>(n));
            }
            request_ = request;
            (void)!write(client, response.data(), response.size());
            close(client);
        });
    }
    ~OneShotServer() {
        shutdown(fd_, SHUT_RDWR);
        thread_.join();
        close(fd_);
    }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
    const std::string& request() const { return request_; }

private:
    int fd_;
    uint16_t port_ = 0;
    std::thread thread_;
    std::string request_;
};

// Runs `portico stats ARGS...` with stdout and stderr going to files.
struct Run {
    int code = -1;
    std::string out, err;
};

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

Run run_stats(std::vector<std::string> args) {
    args.insert(args.begin(), "stats");
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    char out_path[] = "/tmp/portico-stats-out-XXXXXX", err_path[] = "/tmp/portico-stats-err-XXXXXX";
    int out = mkstemp(out_path), err = mkstemp(err_path);
    std::fflush(stdout);
    std::fflush(stderr);
    int saved_out = dup(STDOUT_FILENO), saved_err = dup(STDERR_FILENO);
    dup2(out, STDOUT_FILENO);
    dup2(err, STDERR_FILENO);
    Run run;
    run.code = run_stats_command(static_cast<int>(argv.size()), argv.data());
    std::fflush(stdout);
    std::fflush(stderr);
    dup2(saved_out, STDOUT_FILENO);
    dup2(saved_err, STDERR_FILENO);
    for (int fd : {out, err, saved_out, saved_err}) close(fd);
    run.out = slurp(out_path);
    run.err = slurp(err_path);
    unlink(out_path);
    unlink(err_path);
    return run;
}

}  // namespace

TEST_CASE("stats command: reads /stats over HTTP and prints the tables", "[stats]") {
    Portico portico;
    portico.worker->request_finished(1, from_file(200, 10));
    std::string body = render_json(portico.counters->snapshot());

    SECTION("Content-Length") {
        OneShotServer server(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
            std::to_string(body.size()) + "\r\n\r\n" + body);
        Run run = run_stats({"--url", server.url()});
        CHECK(run.code == 0);
        CHECK(run.err.empty());
        CHECK(row(run.out, "assets")[requests] == "1");
        CHECK(server.request().rfind("GET /stats HTTP/1.1\r\n", 0) == 0);
    }
    SECTION("chunked, with the path given") {
        std::ostringstream chunked;
        chunked << std::hex << body.size() / 2 << "\r\n"
                << body.substr(0, body.size() / 2) << "\r\n"
                << body.size() - body.size() / 2 << "\r\n"
                << body.substr(body.size() / 2) << "\r\n0\r\n\r\n";
        OneShotServer server("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
                             chunked.str());
        Run run = run_stats({"--url=" + server.url() + "/stats"});
        CHECK(run.code == 0);
        CHECK(row(run.out, "assets")[requests] == "1");
    }
    SECTION("not the metrics listener") {
        OneShotServer server("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
        Run run = run_stats({"--url", server.url()});
        CHECK(run.code == 1);
        CHECK(run.err.find(server.url() + "/stats answered 404 Not Found") != std::string::npos);
    }
}

TEST_CASE("stats command: errors speak to the operator", "[stats]") {
    // A port nobody listens on: bind one, note it, let it go.
    int probe = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(bind(probe, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    socklen_t length = sizeof address;
    getsockname(probe, reinterpret_cast<sockaddr*>(&address), &length);
    close(probe);
    std::string url = "http://127.0.0.1:" + std::to_string(ntohs(address.sin_port));

    Run refused = run_stats({"--url", url});
    CHECK(refused.code == 1);
    CHECK(refused.err == "portico stats: cannot reach " + url +
                             "/stats: Connection refused — is [metrics] listen set and portico "
                             "running?\n");

    CHECK(run_stats({"--url", "https://127.0.0.1:9145"}).code == 2);
    CHECK(run_stats({"--url", "http://example.com:9145"}).err.find("not an IP address") !=
          std::string::npos);
    CHECK(run_stats({"--url", "http://127.0.0.1:99999"}).code == 2);
    CHECK(run_stats({"--watch", "soon"}).code == 2);
    CHECK(run_stats({"--bogus"}).code == 2);
    CHECK(run_stats({"--help"}).out.find("usage: portico stats") != std::string::npos);
}

namespace {

// The A/B comparison of two runs of the miniature portico, as
// GET /stats/compare renders it: "proxy" (3 proxied requests in 10 s), then
// a reset and "static" (4 from disk, 1 proxied 502, in 4 s).
std::string comparison_document() {
    Portico portico;
    SavedSnapshots snapshots(0);
    for (int i = 0; i < 3; ++i) portico.worker->request_finished(0, proxied_request(200, 2 * ms, ms));
    snapshots.save("proxy", portico.counters->snapshot(), 10'000 * ms, 0);
    portico.counters->reset();
    snapshots.counters_reset(20'000 * ms);
    for (int i = 0; i < 4; ++i) portico.worker->request_finished(1, from_file(200, 10));
    portico.worker->request_finished(0, proxied_request(502, 3 * ms, 2 * ms));
    snapshots.save("static", portico.counters->snapshot(), 24'000 * ms, 0);
    return render_compare_json(compare(*snapshots.find("proxy"), *snapshots.find("static")));
}

// The last three cells (A, B, B / A) of the `index`-th row of the block
// that starts with `name`: measure labels hold spaces, numbers do not.
std::vector<std::string> figures(const std::string& table, const std::string& name,
                                 size_t index) {
    std::istringstream in(table);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    for (size_t i = 0; i < lines.size(); ++i) {
        if (words(lines[i]).empty() || words(lines[i])[0] != name) continue;
        REQUIRE(i + index < lines.size());
        std::vector<std::string> cells = words(lines[i + index]);
        REQUIRE(cells.size() >= 3);
        return {cells.end() - 3, cells.end()};
    }
    FAIL("no block for '" << name << "' in:\n" << table);
    return {};
}

}  // namespace

TEST_CASE("stats --compare: each location's measures side by side, with B / A", "[stats]") {
    std::string table = render_compare_table(json::parse(comparison_document()));
    INFO(table);
    CHECK(table.rfind("A  proxy  taken 1970-01-01T00:00:00Z, 3 requests in 10.0 s since the "
                      "reset (or start)\nB  static  taken",
                      0) == 0);
    CHECK(table.find("location  measure ") != std::string::npos);
    // Rows: requests, req/s, 5xx, rt p50, rt p99, ovh p50, ovh p99.
    CHECK(figures(table, "/", 0) == std::vector<std::string>{"3", "1", "0.33x"});
    CHECK(figures(table, "/", 1) == std::vector<std::string>{"0.3", "0.2", "0.83x"});
    CHECK(figures(table, "/", 2) == std::vector<std::string>{"0", "1", "-"});
    CHECK(figures(table, "assets", 0) == std::vector<std::string>{"0", "4", "-"});
    CHECK(figures(table, "assets", 1) == std::vector<std::string>{"0.0", "1.0", "-"});
    std::vector<std::string> no_time = figures(table, "assets", 3);
    CHECK(no_time[0] == "-");  // rt p50 of no requests
    CHECK(figures(table, "assets", 5) == std::vector<std::string>{"-", "-", "-"});  // from disk
    CHECK(figures(table, "total", 0) == std::vector<std::string>{"3", "5", "1.67x"});
    CHECK(figures(table, "total", 1) == std::vector<std::string>{"0.3", "1.2", "4.17x"});
    CHECK_NOTHROW(render_compare_table(json::object()));
    CHECK_NOTHROW(render_compare_table(json::parse(R"({"measures":[{"key":1}],"locations":7})")));
}

TEST_CASE("stats command: --compare asks /stats/compare and prints the table", "[stats]") {
    std::string body = comparison_document();
    SECTION("found") {
        OneShotServer server("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
        Run run = run_stats({"--url", server.url(), "--compare", "proxy", "static"});
        CHECK(run.code == 0);
        CHECK(run.err.empty());
        CHECK(server.request().rfind("GET /stats/compare?a=proxy&b=static HTTP/1.1\r\n", 0) == 0);
        CHECK(figures(run.out, "total", 0) == std::vector<std::string>{"3", "5", "1.67x"});
    }
    SECTION("an unknown snapshot: portico's own words") {
        std::string said = "404 Not Found: no snapshot named 'ghost' (saved: proxy)\n";
        OneShotServer server("HTTP/1.1 404 Not Found\r\nContent-Length: " +
                             std::to_string(said.size()) + "\r\n\r\n" + said);
        Run run = run_stats({"--url", server.url(), "--compare", "proxy", "ghost"});
        CHECK(run.code == 1);
        CHECK(run.err == "portico stats: " + server.url() +
                             "/stats/compare?a=proxy&b=ghost answered 404 Not Found: no snapshot "
                             "named 'ghost' (saved: proxy)\n");
    }
    CHECK(run_stats({"--compare", "a b", "c"}).code == 2);
    CHECK(run_stats({"--compare", "a", "c&d=e"}).err.find("snapshot name 'c&d=e'") !=
          std::string::npos);
    CHECK(run_stats({"--compare", "a"}).code == 2);
    CHECK(run_stats({"--compare", "a", "b", "--watch", "1s"}).code == 2);
}
