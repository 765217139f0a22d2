// "No request fails because of a reload", proved the hard way: 20 reloads in
// a row while clients keep sending, both on new connections and on kept-alive
// ones, over static files, a proxied app and a fixed response, with two
// busy loops competing for the machine's cores, and `workers` going from 2
// to 1 and back (a listening socket of a slot that goes away must not be
// closed with connections in its queue). Then the drain itself, step by step.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <thread>
#include <vector>

#include "harness.hpp"
#include "upstream_server.hpp"

using namespace portico::test;

namespace {

std::string reload_config(const std::string& root, const std::string& app, const std::string& version,
                   int workers = 2, const std::string& server_options = "") {
    return "[server]\nlisten = [\"{listen}\"]\nworkers = " + std::to_string(workers) +
           "\nshutdown_timeout = \"10s\"\n" + server_options + "\n"
           "[upstream.app]\nservers = [\"" + app + "\"]\n\n"
           "[[location]]\nprefix = \"/static/\"\nroot = '" + root + "'\n\n"
           "[[location]]\nprefix = \"/app/\"\nproxy = \"app\"\n\n"
           "[[location]]\nprefix = \"/\"\nrespond = { status = 200, body = \"" + version + "\" }\n";
}

// Processes that only burn CPU, one per core, stopped by pid.
class CpuContention {
public:
    explicit CpuContention(int processes) {
        for (int i = 0; i < processes; ++i) {
            pid_t pid = fork();
            if (pid == 0) {
                execl("/bin/sh", "sh", "-c", "while :; do :; done", static_cast<char*>(nullptr));
                _exit(127);
            }
            if (pid > 0) pids_.push_back(pid);
        }
    }
    ~CpuContention() {
        for (pid_t pid : pids_) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
        }
    }

private:
    std::vector<pid_t> pids_;
};

const char* const targets[] = {"/", "/static/a.txt", "/app/x"};

struct Tally {
    std::atomic<int> ok{0}, failed{0}, closes{0};
};

bool good(const std::optional<Response>& response) {
    return response && response->status == 200 && !response->body.empty();
}

// A new connection per request, like ab.
void new_connections(uint16_t port, const std::atomic<bool>& stop, Tally& tally) {
    for (int i = 0; !stop; ++i) {
        try {
            if (good(fetch(port, targets[i % 3]))) ++tally.ok;
            else ++tally.failed;
        } catch (const std::exception&) {  // connect refused or reset
            ++tally.failed;
        }
    }
}

// One kept-alive connection, like wrk: a "Connection: close" answer is the
// server saying goodbye cleanly, and the client opens a new one.
void kept_alive(uint16_t port, const std::atomic<bool>& stop, Tally& tally) {
    std::unique_ptr<Client> client;
    for (int i = 0; !stop; ++i) {
        try {
            if (!client) client = std::make_unique<Client>(port);
            client->send(std::string("GET ") + targets[i % 3] + " HTTP/1.1\r\nHost: t\r\n\r\n");
            auto response = client->read_response();
            if (good(response)) ++tally.ok;
            else ++tally.failed;
            if (!response || response->header("connection") == "close") {
                ++tally.closes;
                client.reset();
            }
        } catch (const std::exception&) {
            ++tally.failed;
            client.reset();
        }
    }
}

}  // namespace

TEST_CASE("20 reloads under load and CPU contention, and no request fails", "[process][reload]") {
    TempDir site;
    site.write("static/a.txt", "static file\n");
    UpstreamServer app;
    Portico portico(reload_config(site.path(), app.address(), "v0"));
    CpuContention contention(2);

    std::atomic<bool> stop{false};
    Tally fresh, kept;
    std::vector<std::thread> clients;
    for (int i = 0; i < 2; ++i) clients.emplace_back(new_connections, portico.port(), std::cref(stop), std::ref(fresh));
    for (int i = 0; i < 4; ++i) clients.emplace_back(kept_alive, portico.port(), std::cref(stop), std::ref(kept));

    bool all_reloaded = true;
    for (int reload = 1; reload <= 20 && all_reloaded; ++reload) {
        std::this_thread::sleep_for(150ms);
        portico.rewrite_config(
            reload_config(site.path(), app.address(), "v" + std::to_string(reload), reload % 2 ? 1 : 2));
        portico.signal(SIGHUP);
        all_reloaded = portico.wait_for_log("reloaded:", reload, 20s);
    }
    std::this_thread::sleep_for(300ms);
    stop = true;
    for (std::thread& client : clients) client.join();

    REQUIRE(all_reloaded);
    INFO("new connections: " << fresh.ok << " ok, " << fresh.failed << " failed");
    INFO("kept-alive: " << kept.ok << " ok, " << kept.failed << " failed, " << kept.closes
                        << " closed by a draining worker");
    CHECK(fresh.failed == 0);
    CHECK(kept.failed == 0);
    CHECK(fresh.ok > 20);
    CHECK(kept.ok > 20);
    // The drains said goodbye to kept-alive clients with "Connection: close".
    CHECK(kept.closes > 0);
    auto last = fetch(portico.port(), "/");
    REQUIRE(last);
    CHECK(last->body == "v20");
    CHECK(!portico.worker_pids().empty());
}

TEST_CASE("a draining worker answers a kept-alive client's next request, then says goodbye",
          "[process][reload]") {
    TempDir site;
    UpstreamServer app;
    // keepalive_timeout 1s: the drain's grace period is 1 s.
    const std::string keepalive = "keepalive_timeout = \"1s\"\n";
    Portico portico(reload_config(site.path(), app.address(), "old", 1, keepalive));
    Client busy(portico.port()), idle(portico.port());
    for (Client* client : {&busy, &idle}) {
        client->send("GET / HTTP/1.1\r\nHost: t\r\n\r\n");
        auto response = client->read_response();
        REQUIRE(response);
        CHECK(response->header("connection") == "");
    }
    portico.rewrite_config(reload_config(site.path(), app.address(), "new", 1, keepalive));
    portico.signal(SIGHUP);
    REQUIRE(portico.wait_for_log("reloaded:"));
    // The old worker's own line: the master's "reloaded: ..., old ones
    // draining" is logged before that worker has even seen its SIGQUIT.
    REQUIRE(portico.wait_for_log("worker 0: draining:"));

    // The old worker still answers the next request on its connection, and
    // closes it cleanly: the client is told, not reset.
    busy.send("GET / HTTP/1.1\r\nHost: t\r\n\r\n");
    auto last = busy.read_response();
    REQUIRE(last);
    CHECK(last->status == 200);
    CHECK(last->body == "old");
    CHECK(last->header("connection") == "close");
    CHECK(busy.closed_by_server(2s));

    // A connection that stays idle through the grace period is closed at its end.
    auto start = std::chrono::steady_clock::now();
    CHECK(idle.closed_by_server(5s));
    CHECK(std::chrono::steady_clock::now() - start < 3s);
    REQUIRE(portico.wait_for_log("after draining"));
    auto fresh = fetch(portico.port(), "/");
    REQUIRE(fresh);
    CHECK(fresh->body == "new");
}
