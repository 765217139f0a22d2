// tcp_nopush: a file response's head and its first bytes leave in one TCP
// segment, and the cork comes off once the response is out. Segments are
// counted on the client's socket (tcp_info's tcpi_data_segs_in).
#include <catch2/catch.hpp>

#include <linux/tcp.h>  // struct tcp_info with tcpi_data_segs_in (glibc's has no such field)
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "harness.hpp"
#include "static_site.hpp"

using namespace portico::test;

namespace {

uint32_t data_segments_received(int fd) {
    tcp_info info{};
    socklen_t length = sizeof info;
    REQUIRE(::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &length) == 0);
    return info.tcpi_data_segs_in;
}

// Data segments that carried one response to `path` on `client`.
uint32_t segments_of_response(Client& client, const std::string& path, const std::string& expected) {
    uint32_t before = data_segments_received(client.fd());
    client.send("GET " + path + " HTTP/1.1\r\nHost: t\r\n\r\n");
    auto response = client.read_response();
    REQUIRE(response);
    REQUIRE(response->status == 200);
    REQUIRE((response->body == expected));
    return data_segments_received(client.fd()) - before;
}

}  // namespace

TEST_CASE("static: tcp_nopush sends a file's head with its first bytes, and uncorks at the end",
          "[static]") {
    Site site;
    // Above the file cache's 16 KiB (so sent with sendfile), and with its
    // head well under one loopback segment (64 KiB).
    const std::string file = random_bytes(40 * 1024, 23);
    site.write("plain/f.bin", file);
    site.write("corked/f.bin", file);
    site.write("corked/small.txt", "from memory\n");
    Portico portico("[server]\nlisten = [\"{listen}\"]\nworkers = 1\n\n"
                    "[[location]]\nprefix = \"/corked/\"\nroot = '" + site.root() + "'\ntcp_nopush = true\n\n"
                    "[[location]]\nprefix = \"/\"\nroot = '" + site.root() + "'\n");
    Client client(portico.port());
    // A new connection's first response may be split by the receive window
    // it starts with; later ones find it open.
    segments_of_response(client, "/plain/f.bin", file);

    // Without it, the head goes alone (TCP_NODELAY), then the file.
    CHECK(segments_of_response(client, "/plain/f.bin", file) == 2);
    CHECK(segments_of_response(client, "/corked/f.bin", file) == 1);

    // The cork is off after each response: corked, an unfilled segment waits
    // up to 200 ms for more, so ten responses would take 2 s.
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 5; ++i) {
        CHECK(segments_of_response(client, "/corked/f.bin", file) == 1);
        CHECK(segments_of_response(client, "/corked/small.txt", "from memory\n") == 1);
    }
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(1000));
    // And plain again on the same connection.
    CHECK(segments_of_response(client, "/plain/f.bin", file) == 2);
}
