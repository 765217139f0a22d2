// user = "NAME" in [server]: workers switch to the user, for good, before
// they serve; the master stays root. Checked from the kernel's side
// (/proc/PID/status) and by what a worker can read.
#include <catch2/catch.hpp>

#include <linux/capability.h>
#include <pwd.h>
#include <signal.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "harness.hpp"

using namespace portico::test;

namespace {

// The value of one "Name:\t..." line of /proc/PID/status.
std::string status_field(pid_t pid, const std::string& name) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(in, line);)
        if (line.starts_with(name + ":")) return line.substr(name.size() + 2);
    return "";
}

// Real, effective, saved and file system ids, as /proc prints them.
std::string four_times(unsigned id) {
    std::string text = std::to_string(id);
    return text + "\t" + text + "\t" + text + "\t" + text;
}

// Gone, or a zombie nobody reaps (its parent died; in a container the
// new parent may not wait for it).
bool exits_within(pid_t pid, std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        std::string state = status_field(pid, "State");
        if (state.empty() || state.starts_with("Z")) return true;
        std::this_thread::sleep_for(10ms);
    }
    return false;
}

std::string config_serving(const std::string& root, const std::string& listen = "{listen}") {
    return "[server]\nlisten = [\"" + listen + "\"]\nworkers = 1\nuser = \"nobody\"\n\n"
           "[[location]]\nprefix = \"/\"\nroot = '" + root + "'\n";
}

// A free privileged port on 127.0.0.1 (only root may bind it), or 0.
uint16_t free_privileged_port() {
    for (uint16_t port = 1023; port >= 900; --port) {
        int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_port = htons(port);
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        bool bound = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
        ::close(fd);
        if (bound) return port;
    }
    return 0;
}

}  // namespace

TEST_CASE("workers switch to user nobody for good, and the master stays root", "[user]") {
    const struct passwd* nobody = getpwnam("nobody");
    REQUIRE(nobody);
    TempDir site;
    // mkdtemp made it 0700 and root's: nobody could not even reach www/.
    REQUIRE(::chmod(site.path().c_str(), 0755) == 0);
    site.write("www/public.txt", "for everyone\n");
    std::string secret = site.write("www/secret.txt", "root only\n");
    REQUIRE(::chmod(secret.c_str(), 0600) == 0);
    Portico portico(config_serving(site.path() + "/www"));

    auto everyone = fetch(portico.port(), "/public.txt");
    REQUIRE(everyone);
    CHECK(everyone->status == 200);
    CHECK(everyone->body == "for everyone\n");
    // open(2) says EACCES, which the static handler answers 403 (as nginx).
    auto root_only = fetch(portico.port(), "/secret.txt");
    REQUIRE(root_only);
    CHECK(root_only->status == 403);

    std::vector<pid_t> workers = portico.worker_pids();
    REQUIRE(workers.size() == 1);
    CHECK(status_field(workers[0], "Uid") == four_times(nobody->pw_uid));
    CHECK(status_field(workers[0], "Gid") == four_times(nobody->pw_gid));
    // nobody's groups only: none of root's supplementary groups stayed.
    CHECK(status_field(workers[0], "Groups") == std::to_string(nobody->pw_gid) + " ");
    CHECK(status_field(workers[0], "CapPrm") == "0000000000000000");
    CHECK(status_field(workers[0], "CapEff") == "0000000000000000");
    CHECK(status_field(workers[0], "NoNewPrivs") == "1");
    CHECK(status_field(portico.pid(), "Uid") == four_times(0));

    // The parent-death signal survives the switch (changing ids clears it,
    // so it is set after): a worker does not outlive a killed master.
    portico.signal(SIGKILL);
    REQUIRE(portico.wait_exit(5s));
    CHECK(exits_within(workers[0], 10s));
}

TEST_CASE("a worker that cannot switch users exits and never serves as root", "[user]") {
    TempDir site;
    REQUIRE(::chmod(site.path().c_str(), 0755) == 0);
    site.write("www/public.txt", "for everyone\n");
    // Without CAP_SETUID the master is still root (uid 0) but its workers'
    // setresuid fails, after the group calls succeeded.
    Portico portico(config_serving(site.path() + "/www"), {{}, {CAP_SETUID}});
    CHECK(portico.wait_for_log("worker 0: cannot switch to user nobody: setresuid(" +
                               std::to_string(getpwnam("nobody")->pw_uid) +
                               "): Operation not permitted; exiting rather than serving as root"));
    CHECK(portico.wait_for_log("exited with code 1; restarting it"));
    // The connection waits in the kernel's queue: no worker ever answers it.
    Client client(portico.port());
    client.send("GET /public.txt HTTP/1.1\r\nHost: test\r\n\r\n");
    CHECK_FALSE(client.read_response(500ms));
    CHECK(portico.log().find("worker 0: started") == std::string::npos);
}

TEST_CASE("the master binds a port below 1024 and workers running as nobody serve it", "[user]") {
    const struct passwd* nobody = getpwnam("nobody");
    REQUIRE(nobody);
    uint16_t port = free_privileged_port();
    REQUIRE(port != 0);
    TempDir site;
    REQUIRE(::chmod(site.path().c_str(), 0755) == 0);
    site.write("www/public.txt", "for everyone\n");
    Portico portico(config_serving(site.path() + "/www", "127.0.0.1:" + std::to_string(port)));
    REQUIRE(portico.port() == port);

    auto response = fetch(port, "/public.txt");
    REQUIRE(response);
    CHECK(response->status == 200);
    CHECK(response->body == "for everyone\n");
    std::vector<pid_t> workers = portico.worker_pids();
    REQUIRE(workers.size() == 1);
    CHECK(status_field(workers[0], "Uid") == four_times(nobody->pw_uid));

    // A reload keeps the privileged socket: the new worker, nobody too,
    // serves it without binding anything itself.
    portico.signal(SIGHUP);
    REQUIRE(portico.wait_for_log("reloaded: 1 new workers"));
    std::this_thread::sleep_for(200ms);
    auto after = fetch(port, "/public.txt");
    REQUIRE(after);
    CHECK(after->status == 200);
    for (pid_t worker : portico.worker_pids())
        CHECK(status_field(worker, "Uid") == four_times(nobody->pw_uid));
}
