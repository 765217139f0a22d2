#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

#include "http/chunked_coding.hpp"

using portico::http::chunk_size_line;
using portico::http::max_chunk_size_line;

TEST_CASE("chunk_size_line writes the size in lowercase hex without leading zeros", "[http]") {
    const std::pair<uint64_t, std::string> cases[] = {
        {0, "0\r\n"},
        {1, "1\r\n"},
        {15, "f\r\n"},
        {16, "10\r\n"},
        {4000, "fa0\r\n"},
        {65536, "10000\r\n"},
        {0x7fffffff, "7fffffff\r\n"},
        {UINT64_MAX, "ffffffffffffffff\r\n"},
    };
    for (const auto& [size, expected] : cases) {
        char line[max_chunk_size_line];
        CHECK(std::string(chunk_size_line(size, line)) == expected);
    }
}
