// The PROXY protocol header, v1 and v2, parsed from bytes: the client it
// names, its length (what follows is the client's), and every way it can
// be wrong or not yet whole.
#include <arpa/inet.h>

#include <string>

#include <catch2/catch.hpp>

#include "http/proxy_protocol.hpp"

using portico::http::parse_proxy_header;
using portico::http::ProxyHeader;
using Status = ProxyHeader::Status;

// Its own namespace: in a unity build the test files share one translation
// unit, and their helpers (Answer, fake_path...) must not meet.
namespace http_proxy_protocol_test {

namespace {

constexpr size_t buffer = 16 * 1024;
const std::string v2_signature("\r\n\r\n\0\r\nQUIT\n", 12);

std::string ip(const ProxyHeader& header) {
    char text[INET6_ADDRSTRLEN];
    if (header.source.any.sa_family == AF_INET)
        inet_ntop(AF_INET, &header.source.v4.sin_addr, text, sizeof text);
    else
        inet_ntop(AF_INET6, &header.source.v6.sin6_addr, text, sizeof text);
    return text;
}

uint16_t port(const ProxyHeader& header) {
    return ntohs(header.source.any.sa_family == AF_INET ? header.source.v4.sin_port
                                                        : header.source.v6.sin6_port);
}

// A v2 header: command (0 LOCAL, 1 PROXY), family byte, address block.
std::string v2(int command, int family, const std::string& addresses) {
    std::string header = v2_signature;
    header += static_cast<char>(0x20 | command);
    header += static_cast<char>(family);
    header += static_cast<char>(addresses.size() >> 8);
    header += static_cast<char>(addresses.size() & 0xff);
    return header + addresses;
}

std::string v4_block(const char* source, const char* destination, uint16_t source_port,
                     uint16_t destination_port) {
    std::string block(12, '\0');
    inet_pton(AF_INET, source, block.data());
    inet_pton(AF_INET, destination, block.data() + 4);
    block[8] = static_cast<char>(source_port >> 8);
    block[9] = static_cast<char>(source_port & 0xff);
    block[10] = static_cast<char>(destination_port >> 8);
    block[11] = static_cast<char>(destination_port & 0xff);
    return block;
}

std::string v6_block(const char* source, uint16_t source_port) {
    std::string block(36, '\0');
    inet_pton(AF_INET6, source, block.data());
    inet_pton(AF_INET6, "2001:db8::ffff", block.data() + 16);
    block[32] = static_cast<char>(source_port >> 8);
    block[33] = static_cast<char>(source_port & 0xff);
    block[35] = 80;
    return block;
}

}  // namespace

TEST_CASE("a v1 header names the client and ends at its CRLF", "[proxy-protocol]") {
    std::string line = "PROXY TCP4 203.0.113.7 192.0.2.1 56324 443\r\n";
    ProxyHeader header = parse_proxy_header(line + "GET / HTTP/1.1\r\n", buffer);
    REQUIRE(header.status == Status::complete);
    CHECK(header.length == line.size());
    CHECK(header.has_source);
    CHECK(ip(header) == "203.0.113.7");
    CHECK(port(header) == 56324);

    header = parse_proxy_header("PROXY TCP6 2001:db8::7 2001:db8::1 1 65535\r\n", buffer);
    REQUIRE(header.status == Status::complete);
    CHECK(ip(header) == "2001:db8::7");
    CHECK(port(header) == 1);

    // UNKNOWN keeps the peer; the rest of its line is ignored.
    header = parse_proxy_header("PROXY UNKNOWN\r\n\x16\x03\x01", buffer);
    REQUIRE(header.status == Status::complete);
    CHECK(header.length == 15);
    CHECK_FALSE(header.has_source);
    header = parse_proxy_header("PROXY UNKNOWN ffff:f...f:ffff 65535 65535\r\n", buffer);
    CHECK(header.status == Status::complete);
    CHECK_FALSE(header.has_source);
}

TEST_CASE("a v1 header in pieces is incomplete until its CRLF", "[proxy-protocol]") {
    std::string line = "PROXY TCP4 203.0.113.7 192.0.2.1 56324 443\r\n";
    for (size_t size = 1; size < line.size(); ++size) {
        INFO(size);
        CHECK(parse_proxy_header(line.substr(0, size), buffer).status == Status::incomplete);
    }
    // The longest line is 107 bytes; one that has not ended by then is not one.
    CHECK(parse_proxy_header("PROXY UNKNOWN " + std::string(93, 'x'), buffer).status ==
          Status::invalid);
    CHECK(parse_proxy_header("PROXY UNKNOWN " + std::string(92, 'x'), buffer).status ==
          Status::incomplete);
    CHECK(parse_proxy_header("PROXY UNKNOWN " + std::string(91, 'x') + "\r\n", buffer).status ==
          Status::complete);
}

TEST_CASE("a bad v1 header is invalid", "[proxy-protocol]") {
    for (const char* bad : {
             "GET / HTTP/1.1\r\n",                      // no header at all
             "PROXZ TCP4 1.2.3.4 5.6.7.8 1 2\r\n",      // signature
             "PROXY TCP5 1.2.3.4 5.6.7.8 1 2\r\n",      // protocol
             "PROXY TCP4 1.2.3.4 5.6.7.8 1\r\n",        // a port missing
             "PROXY TCP4 1.2.3.4 5.6.7.8 1 2 3\r\n",    // a field too many
             "PROXY TCP4 1.2.3.4  5.6.7.8 1 2\r\n",     // two spaces
             "PROXY TCP4 1.2.3.400 5.6.7.8 1 2\r\n",    // not an address
             "PROXY TCP4 2001:db8::1 5.6.7.8 1 2\r\n",  // the other family
             "PROXY TCP6 1.2.3.4 2001:db8::1 1 2\r\n",  // the other family
             "PROXY TCP4 1.2.3.4 5.6.7.8 65536 2\r\n",  // port range
             "PROXY TCP4 1.2.3.4 5.6.7.8 01 2\r\n",     // leading zero
             "PROXY TCP4 1.2.3.4 5.6.7.8 -1 2\r\n",     // not a number
             "PROXY TCP4 1.2.3.4 5.6.7.8 1 2\rX\n",     // a CR without its LF
             "\x16\x03\x01\x02\x00",                    // a TLS ClientHello
         }) {
        INFO(bad);
        ProxyHeader header = parse_proxy_header(bad, buffer);
        CHECK(header.status == Status::invalid);
        CHECK_FALSE(header.problem.empty());
    }
}

TEST_CASE("a v2 header names the client over IPv4 and IPv6", "[proxy-protocol]") {
    std::string header_bytes = v2(1, 0x11, v4_block("198.51.100.4", "192.0.2.1", 40000, 443));
    ProxyHeader header = parse_proxy_header(header_bytes + "\x16\x03\x01", buffer);
    REQUIRE(header.status == Status::complete);
    CHECK(header.length == 28);
    CHECK(header.has_source);
    CHECK(ip(header) == "198.51.100.4");
    CHECK(port(header) == 40000);

    // TLVs after the addresses (AWS's VPC endpoint id) are part of it, skipped.
    header_bytes = v2(1, 0x21, v6_block("2001:db8::42", 51000) + std::string("\xea\x00\x03vpc", 6));
    header = parse_proxy_header(header_bytes, buffer);
    REQUIRE(header.status == Status::complete);
    CHECK(header.length == 16 + 36 + 6);
    CHECK(ip(header) == "2001:db8::42");
    CHECK(port(header) == 51000);

    for (size_t size = 1; size < header_bytes.size(); ++size) {
        INFO(size);
        CHECK(parse_proxy_header(header_bytes.substr(0, size), buffer).status ==
              Status::incomplete);
    }
}

TEST_CASE("v2 LOCAL and other families keep the peer", "[proxy-protocol]") {
    // LOCAL: the balancer's own health check, whatever the block holds.
    ProxyHeader header = parse_proxy_header(v2(0, 0x00, ""), buffer);
    REQUIRE(header.status == Status::complete);
    CHECK(header.length == 16);
    CHECK_FALSE(header.has_source);
    header = parse_proxy_header(v2(0, 0x11, v4_block("198.51.100.4", "192.0.2.1", 1, 2)), buffer);
    REQUIRE(header.status == Status::complete);
    CHECK_FALSE(header.has_source);
    // PROXY over UDP, a Unix socket, or UNSPEC: valid, but no TCP client to name.
    for (int family : {0x00, 0x12, 0x22, 0x31, 0x32}) {
        INFO(family);
        header = parse_proxy_header(v2(1, family, std::string(12, '\0')), buffer);
        CHECK(header.status == Status::complete);
        CHECK_FALSE(header.has_source);
    }
}

TEST_CASE("a bad v2 header is invalid", "[proxy-protocol]") {
    std::string good = v2(1, 0x11, v4_block("198.51.100.4", "192.0.2.1", 1, 2));
    std::string bad_signature = good;
    bad_signature[7] = 'X';
    std::string version_one = good;
    version_one[12] = 0x11;
    std::string command = good;
    command[12] = 0x22;
    std::string family = good;
    family[13] = 0x41;
    std::string protocol = good;
    protocol[13] = 0x13;
    for (const std::string& bad :
         {bad_signature, version_one, command, family, protocol,
          v2(1, 0x11, std::string(11, '\0')),     // too short for two IPv4 addresses
          v2(1, 0x21, std::string(35, '\0'))}) {  // ... or two IPv6 ones
        ProxyHeader header = parse_proxy_header(bad, buffer);
        CHECK(header.status == Status::invalid);
    }
    // Longer than the reader's buffer.
    std::string huge = v2(1, 0x11, std::string(2000, '\0'));
    CHECK(parse_proxy_header(huge, 1024).status == Status::invalid);
    CHECK(parse_proxy_header(huge.substr(0, 16), 1024).status == Status::invalid);
    CHECK(parse_proxy_header(huge, buffer).status == Status::complete);
}

}  // namespace http_proxy_protocol_test
