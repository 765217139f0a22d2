// The process model on the real binary: several workers, a worker crash,
// reloads (good and broken), graceful and immediate stops.
#include <catch2/catch.hpp>

#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "harness.hpp"

using namespace portico::test;

namespace {

std::string config_with_body(const std::string& body, int workers = 2) {
    return R"(
[server]
listen = ["{listen}"]
workers = )" + std::to_string(workers) + R"(
shutdown_timeout = "10s"

[[location]]
prefix = "/"
respond = { status = 200, body = ")" + body + R"(" }
)";
}

// Client sockets a process holds (its listening sockets excluded).
int connected_sockets(pid_t pid) {
    namespace fs = std::filesystem;
    int count = 0;
    std::string fd_dir = "/proc/" + std::to_string(pid) + "/fd";
    for (const auto& entry : fs::directory_iterator(fd_dir)) {
        std::error_code error;
        std::string target = fs::read_symlink(entry.path(), error).string();
        if (target.rfind("socket:", 0) == 0) ++count;
    }
    return count;
}

}  // namespace

TEST_CASE("workers = 2 starts two workers that both accept", "[process]") {
    Portico portico(config_with_body("w"));
    REQUIRE(portico.wait_for_log("worker 1: started"));
    std::vector<pid_t> workers = portico.worker_pids();
    REQUIRE(workers.size() == 2);
    std::vector<int> idle_sockets = {connected_sockets(workers[0]), connected_sockets(workers[1])};
    // SO_REUSEPORT spreads connections by their address hash: with 24 kept
    // open, both workers hold some (all on one: a 1 in 8 million chance).
    std::vector<std::unique_ptr<Client>> clients;
    for (int i = 0; i < 24; ++i) {
        clients.push_back(std::make_unique<Client>(portico.port()));
        clients.back()->send("GET / HTTP/1.1\r\nHost: t\r\n\r\n");
        REQUIRE(clients.back()->read_response());
    }
    int first = connected_sockets(workers[0]) - idle_sockets[0];
    int second = connected_sockets(workers[1]) - idle_sockets[1];
    CHECK(first + second == 24);
    CHECK(first > 0);
    CHECK(second > 0);
}

namespace {

// The policy of the single worker of a portico started under `started_under`
// (this test's own policy, which the master inherits) with `scheduling_line`
// in [server]; checks that the master keeps its policy and that it serves.
int worker_policy(int started_under, const std::string& scheduling_line) {
    sched_param no_priority{};
    REQUIRE(sched_setscheduler(0, started_under, &no_priority) == 0);
    Portico portico("[server]\nlisten = [\"{listen}\"]\n" + scheduling_line +
                    "\n[[location]]\nprefix = \"/\"\nrespond = { status = 200, body = \"s\" }\n");
    REQUIRE(sched_setscheduler(0, SCHED_OTHER, &no_priority) == 0);
    REQUIRE(portico.wait_for_log("worker 0: started"));
    std::vector<pid_t> workers = portico.worker_pids();
    REQUIRE(workers.size() == 1);
    CHECK(sched_getscheduler(portico.pid()) == started_under);
    Client client(portico.port());
    client.send("GET / HTTP/1.1\r\nHost: t\r\n\r\n");
    auto response = client.read_response();
    REQUIRE(response);
    CHECK(response->body == "s");
    return sched_getscheduler(workers[0]);
}

}  // namespace

TEST_CASE("worker_scheduling sets the workers' policy, and unset, they keep the one portico was started with",
          "[process]") {
    CHECK(worker_policy(SCHED_OTHER, "worker_scheduling = \"batch\"\n") == SCHED_BATCH);
    CHECK(worker_policy(SCHED_BATCH, "worker_scheduling = \"normal\"\n") == SCHED_OTHER);
    CHECK(worker_policy(SCHED_BATCH, "") == SCHED_BATCH);  // chrt --batch portico, as with nginx
    CHECK(worker_policy(SCHED_OTHER, "") == SCHED_OTHER);
}

TEST_CASE("a worker killed with SIGKILL is restarted and service goes on", "[process]") {
    Portico portico(config_with_body("alive"));
    REQUIRE(portico.wait_for_log("worker 1: started"));
    std::vector<pid_t> before = portico.worker_pids();
    REQUIRE(before.size() == 2);
    ::kill(before[0], SIGKILL);
    REQUIRE(portico.wait_for_log("was killed by signal"));
    REQUIRE(portico.wait_for_log("started worker", 3));
    std::vector<pid_t> after = portico.worker_pids();
    CHECK(after.size() == 2);
    CHECK(std::find(after.begin(), after.end(), before[0]) == after.end());
    for (int i = 0; i < 40; ++i) {
        auto response = fetch(portico.port(), "/");
        REQUIRE(response);
        CHECK(response->body == "alive");
    }
}

// Reloads under load: reload_under_load_test.cpp.

TEST_CASE("SIGHUP with a broken file keeps the old config serving", "[process][reload]") {
    Portico portico(config_with_body("still-v1"));
    portico.rewrite_config("[server]\nlisten = [\"{listen}\"]\nworkers = 0\nbogus = 1\n");
    portico.signal(SIGHUP);
    REQUIRE(portico.wait_for_log("reload failed"));
    std::string log = portico.log();
    // The operator is told where: FILE:LINE:COL for each problem.
    CHECK(log.find(portico.config_path() + ":3:") != std::string::npos);
    CHECK(log.find(portico.config_path() + ":4:") != std::string::npos);
    auto response = fetch(portico.port(), "/");
    REQUIRE(response);
    CHECK(response->body == "still-v1");
}

TEST_CASE("SIGTERM lets a slow response finish, then exits 0", "[process][shutdown]") {
    const std::string big(8 << 20, 'x');
    Portico portico(config_with_body(big, 1));
    Client slow(portico.port(), 4096);
    slow.send("GET / HTTP/1.1\r\nHost: t\r\n\r\n");
    std::this_thread::sleep_for(300ms);  // the response is now stuck in flight
    portico.signal(SIGTERM);
    CHECK_FALSE(portico.wait_exit(500ms));  // still finishing our response
    // A new client is refused (or closed) rather than served by a stopping server.
    auto response = slow.read_response(20s);
    REQUIRE(response);
    CHECK(response->body.size() == big.size());
    CHECK(response->header("connection") == "");
    CHECK(portico.wait_exit(5s) == 0);
}

TEST_CASE("a second SIGTERM stops at once", "[process][shutdown]") {
    const std::string big(8 << 20, 'x');
    Portico portico(config_with_body(big, 1));
    Client slow(portico.port(), 4096);
    slow.send("GET / HTTP/1.1\r\nHost: t\r\n\r\n");
    std::this_thread::sleep_for(300ms);
    portico.signal(SIGTERM);
    CHECK_FALSE(portico.wait_exit(300ms));
    portico.signal(SIGTERM);
    auto code = portico.wait_exit(3s);
    REQUIRE(code);
    CHECK(*code != 0);
    // The worker is gone too: the slow client's connection ends.
    CHECK(slow.read_until_close(5s));
}
