#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/listen_socket.hpp"
#include "core/unique_fd.hpp"

using portico::core::describe_port_holders;
using portico::core::UniqueFd;

namespace {

// A listener on 127.0.0.1 and an ephemeral port; the port in `port`.
UniqueFd loopback_listener(uint16_t& port) {
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM, 0));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    REQUIRE(::listen(fd.get(), 4) == 0);
    socklen_t length = sizeof address;
    ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &length);
    port = ntohs(address.sin_port);
    return fd;
}

}  // namespace

TEST_CASE("a port in use is explained: another listener, or only connections by state", "[core]") {
    uint16_t port = 0;
    UniqueFd listener = loopback_listener(port);
    CHECK_THAT(describe_port_holders(port), Catch::Contains("another server listens on this port"));

    UniqueFd client(::socket(AF_INET, SOCK_STREAM, 0));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(port);
    REQUIRE(::connect(client.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    UniqueFd accepted(::accept(listener.get(), nullptr, nullptr));
    REQUIRE(accepted);
    listener.reset();
    // The accepted side's local port is the listener's: held by a connection now.
    std::string held = describe_port_holders(port);
    CHECK_THAT(held, Catch::Contains("no server listens on it"));
    CHECK_THAT(held, Catch::Contains("1 ESTABLISHED"));
    // The server side closes first: its end waits in FIN_WAIT2, then TIME_WAIT.
    accepted.reset();
    client.reset();
    CHECK_THAT(describe_port_holders(port),
               Catch::Contains("TIME_WAIT") || Catch::Contains("FIN_WAIT"));
}
