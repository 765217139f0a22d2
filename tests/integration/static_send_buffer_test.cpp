// large_send_buffer: a large file to a reader fast enough that the kernel's
// autotuning took the socket's send buffer to its maximum gets the larger
// buffer; without the option (its default, 0) it keeps the kernel's. The server socket's
// buffer is read with ss(8) (iproute2), as `tb` in its skmem.
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "harness.hpp"
#include "skip.hpp"
#include "static_site.hpp"

using namespace portico::test;

namespace {

uint64_t last_number_in(const char* path) {
    std::ifstream in(path);
    uint64_t number = 0;
    for (uint64_t next; in >> next;) number = next;
    return number;
}

// What the kernel makes of SO_SNDBUF `asked` on a socket here.
uint64_t granted_send_buffer(int asked) {
    int probe = ::socket(AF_INET, SOCK_STREAM, 0);
    int granted = 0;
    socklen_t length = sizeof granted;
    ::setsockopt(probe, SOL_SOCKET, SO_SNDBUF, &asked, sizeof asked);
    ::getsockopt(probe, SOL_SOCKET, SO_SNDBUF, &granted, &length);
    ::close(probe);
    return static_cast<uint64_t>(granted);
}

// The send buffer of portico's socket to the client at `client_port`; 0 when
// ss does not show it.
uint64_t server_send_buffer(uint16_t server_port, uint16_t client_port) {
    std::string output = socket_statistics("-m state established '( sport = :" + std::to_string(server_port) +
                                           " and dport = :" + std::to_string(client_port) + " )'");
    // skmem:(r0,rb131072,t0,tb8388608,...)
    size_t at = output.find(",tb");
    if (at == std::string::npos) return 0;
    return std::strtoull(output.c_str() + at + 3, nullptr, 10);
}

}  // namespace

TEST_CASE("static: a large file to a fast reader gets large_send_buffer, and unset keeps the kernel buffer",
          "[static]") {
    const uint64_t autotuned = last_number_in("/proc/sys/net/ipv4/tcp_wmem");
    const uint64_t granted = granted_send_buffer(4 * 1024 * 1024);
    if (granted <= autotuned)
        PORTICO_SKIP("net.core.wmem_max grants " << granted << " bytes, no more than autotuning's "
                                                 << autotuned
                                                 << ": large_send_buffer is not used here");
    Site site;
    const std::string big = random_bytes(12 * 1024 * 1024, 17);
    site.write("big.bin", big);
    const bool option_on = GENERATE(true, false);
    Portico portico(static_site_config(site.root(), "", option_on ? "large_send_buffer = \"4MiB\"\n" : ""));
    Client client(portico.port());
    const uint16_t client_port = local_port(client.fd());
    // The first response may end before autotuning reaches its maximum; the
    // next ones on the connection start there.
    uint64_t buffer = 0;
    for (int i = 0; i < 4; ++i) {
        client.send("GET /big.bin HTTP/1.1\r\nHost: t\r\n\r\n");
        auto response = client.read_response(10s);
        REQUIRE(response);
        REQUIRE(response->status == 200);
        REQUIRE((response->body == big));
        buffer = server_send_buffer(portico.port(), client_port);
        REQUIRE(buffer > 0);
        if (buffer == granted) break;
    }
    INFO("autotuning's maximum " << autotuned << ", granted " << granted);
    if (option_on)
        CHECK(buffer == granted);
    else
        CHECK(buffer <= autotuned);
}

TEST_CASE("static: large_send_buffer the kernel will not grant is unused, and said once for all workers",
          "[static]") {
    // SO_SNDBUF of 1 MiB is granted as at most 2 MiB, under autotuning's
    // usual 4 MiB maximum.
    const uint64_t autotuned = last_number_in("/proc/sys/net/ipv4/tcp_wmem");
    const uint64_t granted = granted_send_buffer(1024 * 1024);
    if (granted > autotuned)
        PORTICO_SKIP("autotuning's maximum " << autotuned << " is below " << granted
                                             << ": a 1 MiB large_send_buffer is used here");
    Site site;
    site.write("small.txt", "served\n");
    Portico portico("[server]\nlisten = [\"{listen}\"]\nworkers = 2\nlarge_send_buffer = \"1MiB\"\n\n"
                    "[[location]]\nprefix = \"/\"\nroot = '" + site.root() + "'\n");
    REQUIRE(portico.wait_for_log("worker 1: started (pid"));
    REQUIRE(portico.wait_for_log("worker 0: started (pid"));
    const std::string log = portico.log();
    INFO(log);
    const std::string warning = "large_send_buffer not used: the kernel grants " +
                                std::to_string(granted) + " bytes for it, no more than autotuning's " +
                                std::to_string(autotuned);
    size_t first = log.find(warning);
    CHECK(first != std::string::npos);
    CHECK(log.find(warning, first + 1) == std::string::npos);
    for (int i = 0; i < 4; ++i) {
        Client client(portico.port());
        client.send("GET /small.txt HTTP/1.1\r\nHost: t\r\n\r\n");
        auto response = client.read_response(5s);
        REQUIRE(response);
        CHECK(response->status == 200);
        CHECK(response->body == "served\n");
    }
}
