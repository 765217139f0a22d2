// The Type=notify protocol without systemd: the test owns the datagram
// socket NOTIFY_SOCKET names, as systemd would, and reads what the master
// says at start, around reloads good and bad, and at stop.
#include <catch2/catch.hpp>

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <ctime>
#include <optional>
#include <string>

#include "harness.hpp"

using namespace portico::test;

namespace {

// An abstract-namespace socket ("@name"): no file, no permissions to arrange.
class NotifySocket {
public:
    NotifySocket() : name_("portico-notify-test-" + std::to_string(getpid())) {
        fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        name_.copy(address.sun_path + 1, name_.size());
        auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name_.size());
        REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&address), length) == 0);
    }
    ~NotifySocket() { ::close(fd_); }
    NotifySocket(const NotifySocket&) = delete;
    NotifySocket& operator=(const NotifySocket&) = delete;

    std::string environment() const { return "NOTIFY_SOCKET=@" + name_; }

    // The next datagram, or nullopt when none came in time.
    std::optional<std::string> next(std::chrono::milliseconds timeout = 10s) {
        pollfd pfd{fd_, POLLIN, 0};
        if (::poll(&pfd, 1, static_cast<int>(timeout.count())) <= 0) return std::nullopt;
        char message[4096];
        ssize_t n = ::recv(fd_, message, sizeof message, 0);
        if (n <= 0) return std::nullopt;
        return std::string(message, static_cast<size_t>(n));
    }

private:
    std::string name_;
    int fd_ = -1;
};

// The MONOTONIC_USEC=N value in a message, or -1.
long long monotonic_usec_in(const std::string& message) {
    size_t at = message.find("MONOTONIC_USEC=");
    return at == std::string::npos ? -1 : std::stoll(message.substr(at + 15));
}

long long monotonic_usec_now() {
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec * 1'000'000LL + now.tv_nsec / 1000;
}

const std::string config_text =
    "[server]\nlisten = [\"{listen}\"]\nworkers = 2\n\n"
    "[[location]]\nexact = \"/health\"\nrespond = { status = 200, body = \"ok\\n\" }\n";

}  // namespace

TEST_CASE("the master tells NOTIFY_SOCKET: ready, reloading then ready, stopping", "[systemd]") {
    NotifySocket notify;
    Portico portico(config_text, {{notify.environment()}, {}});

    auto ready = notify.next();
    REQUIRE(ready);
    CHECK(contains(*ready, "READY=1\n"));
    CHECK(contains(*ready, "STATUS=2 workers accepting on 127.0.0.1:0"));
    // Sent once both workers accept, not at the fork: each logged its start
    // before telling the master.
    CHECK(contains(portico.log(), "worker 0: started"));
    CHECK(contains(portico.log(), "worker 1: started"));
    auto health = fetch(portico.port(), "/health");
    REQUIRE(health);
    CHECK(health->status == 200);

    long long before = monotonic_usec_now();
    portico.signal(SIGHUP);
    auto reloading = notify.next();
    REQUIRE(reloading);
    CHECK(contains(*reloading, "RELOADING=1\n"));
    long long reload_began = monotonic_usec_in(*reloading);
    CHECK(reload_began >= before);
    CHECK(reload_began <= monotonic_usec_now());
    auto reloaded = notify.next();
    REQUIRE(reloaded);
    CHECK(contains(*reloaded, "READY=1\n"));
    CHECK(contains(*reloaded, "STATUS=2 workers accepting"));
    CHECK(contains(portico.log(), "reloaded: 2 new workers"));

    // A bad file: still READY=1 (systemd must leave "reloading"), saying why.
    portico.rewrite_config("[server]\nlisten = [\"{listen}\"]\nworkerz = 2\n");
    portico.signal(SIGHUP);
    auto failing = notify.next();
    REQUIRE(failing);
    CHECK(contains(*failing, "RELOADING=1\n"));
    auto failed = notify.next();
    REQUIRE(failed);
    CHECK(contains(*failed, "READY=1\n"));
    CHECK(contains(*failed, "STATUS=reload failed: 1 problem(s) in "));

    portico.signal(SIGTERM);
    auto stopping = notify.next();
    REQUIRE(stopping);
    CHECK(contains(*stopping, "STOPPING=1\n"));
    CHECK(portico.wait_exit(10s) == 0);
    CHECK_FALSE(notify.next(100ms));
}
