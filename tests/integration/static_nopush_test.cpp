// tcp_nopush: a file response's head and its first bytes leave in one TCP
// segment, and the cork comes off once the response is out. Segments are
// counted on the client's socket: ss(8)'s data_segs_in (tcp_info's
// tcpi_data_segs_in, which glibc's struct tcp_info lacks, and <linux/tcp.h>
// cannot be included beside <netinet/tcp.h> in a unity build).
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "harness.hpp"
#include "skip.hpp"
#include "static_site.hpp"

using namespace portico::test;

namespace {

// A number ss -i prints for the client socket `fd` after `label` (e.g.
// "advmss:"); 0 when it is left out (data_segs_in is, while it is 0).
uint32_t client_socket_figure(int fd, const std::string& label) {
    std::string output = socket_statistics("-i state established '( sport = :" +
                                           std::to_string(local_port(fd)) + " )'");
    INFO("ss printed: " << output);
    REQUIRE(!output.empty());
    size_t at = output.find(" " + label);
    return at == std::string::npos
               ? 0
               : static_cast<uint32_t>(std::strtoul(output.c_str() + at + 1 + label.size(), nullptr, 10));
}

uint32_t data_segments_received(int fd) { return client_socket_figure(fd, "data_segs_in:"); }

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
    // Above the file cache's 16 KiB (so sent with sendfile), and the whole
    // response, head and file, under one loopback segment where lo's MTU is
    // Linux's default 65536 (the test says so and stops under a smaller one).
    const std::string file = random_bytes(40 * 1024, 23);
    site.write("plain/f.bin", file);
    site.write("corked/f.bin", file);
    site.write("corked/small.txt", "from memory\n");
    Portico portico("[server]\nlisten = [\"{listen}\"]\nworkers = 1\n\n"
                    "[[location]]\nprefix = \"/corked/\"\nroot = '" + site.root() + "'\ntcp_nopush = true\n\n"
                    "[[location]]\nprefix = \"/\"\nroot = '" + site.root() + "'\n");
    Client client(portico.port());
    // The largest segment the client asked for, from lo's MTU.
    const uint32_t mss = client_socket_figure(client.fd(), "advmss:");
    REQUIRE(mss > 0);
    if (mss < file.size() + 1024)
        PORTICO_SKIP("the client's MSS is "
                     << mss << " bytes (lo's MTU 65536 gives 65,483): a response of " << file.size()
                     << " bytes takes several segments either way");
    // A new connection's first response may be split by the receive window
    // it starts with; later ones find it open.
    segments_of_response(client, "/plain/f.bin", file);

    // Without it, the head goes alone (TCP_NODELAY), then the file.
    CHECK(segments_of_response(client, "/plain/f.bin", file) == 2);
    CHECK(segments_of_response(client, "/corked/f.bin", file) == 1);

    // The cork is off after each response: corked, an unfilled segment waits
    // up to 200 ms for more, so ten responses would take 2 s (the bound
    // leaves room for a busy machine).
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 5; ++i) {
        CHECK(segments_of_response(client, "/corked/f.bin", file) == 1);
        CHECK(segments_of_response(client, "/corked/small.txt", "from memory\n") == 1);
    }
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(1500));
    // And plain again on the same connection.
    CHECK(segments_of_response(client, "/plain/f.bin", file) == 2);
}
