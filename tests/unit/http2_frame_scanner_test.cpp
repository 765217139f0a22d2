#include <catch2/catch.hpp>

#include <string>

#include "http2/frame_scanner.hpp"

using portico::http2::FrameScanner;

namespace {

std::string frame_bytes(uint8_t type, uint32_t stream, const std::string& payload) {
    std::string bytes;
    bytes += static_cast<char>(payload.size() >> 16);
    bytes += static_cast<char>(payload.size() >> 8);
    bytes += static_cast<char>(payload.size());
    bytes += static_cast<char>(type);
    bytes += '\0';
    bytes += static_cast<char>(stream >> 24);
    bytes += static_cast<char>(stream >> 16);
    bytes += static_cast<char>(stream >> 8);
    bytes += static_cast<char>(stream);
    return bytes + payload;
}

const std::string preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
constexpr uint8_t data = 0x0, headers = 0x1;

}  // namespace

TEST_CASE("frame scanner: finds each DATA header past the preface and other frames", "[http2]") {
    // A DATA frame's payload that looks like a frame header must not be read as one.
    std::string fake = frame_bytes(data, 99, "");
    std::string input = preface + frame_bytes(headers, 1, "hdrs") + frame_bytes(data, 1, fake) +
                        frame_bytes(data, 3, "xy");
    FrameScanner scanner;
    FrameScanner::Scan first = scanner.next(input.data(), 0, input.size(), data);
    REQUIRE(first.found);
    CHECK(first.header.stream_id == 1);
    CHECK(first.header.length == fake.size());
    CHECK(first.end == preface.size() + 9 + 4 + 9);
    FrameScanner::Scan second = scanner.next(input.data(), first.end, input.size(), data);
    REQUIRE(second.found);
    CHECK(second.header.stream_id == 3);
    FrameScanner::Scan rest = scanner.next(input.data(), second.end, input.size(), data);
    CHECK_FALSE(rest.found);
    CHECK(rest.end == input.size());
}

TEST_CASE("frame scanner: a header split over reads, byte by byte", "[http2]") {
    std::string input =
        preface + frame_bytes(data, 0x7fffffff, "payload") + frame_bytes(data, 5, "");
    FrameScanner scanner;
    std::vector<int32_t> found;
    for (size_t i = 0; i < input.size(); ++i) {
        FrameScanner::Scan scan = scanner.next(input.data(), i, i + 1, data);
        CHECK(scan.end == i + 1);
        if (scan.found) found.push_back(scan.header.stream_id);
    }
    CHECK(found == std::vector<int32_t>{0x7fffffff, 5});
}
