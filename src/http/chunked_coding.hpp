// The writing side of HTTP/1.1's chunked coding (RFC 9112 7.1), for the two
// places that encode: the client connection, for a streamed response to an
// HTTP/1.1 client, and the proxy, for a chunked request body it sends
// upstream. Reading chunks is llhttp's. Neither writes chunk extensions or
// trailer fields.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace portico::http {

inline constexpr std::string_view chunk_end = "\r\n";
inline constexpr std::string_view last_chunk = "0\r\n\r\n";
// A chunk's end and the body's, in one piece.
inline constexpr std::string_view chunk_end_and_last_chunk = "\r\n0\r\n\r\n";
// The longest chunk-size line: 16 hex digits and CRLF.
inline constexpr size_t max_chunk_size_line = 18;

// Writes "SIZE-IN-HEX\r\n" at `out` (max_chunk_size_line bytes of room).
inline std::string_view chunk_size_line(uint64_t size, char* out) {
    static constexpr char digits[] = "0123456789abcdef";
    // One digit per 4 significant bits, at least one.
    size_t count = size == 0 ? 1 : static_cast<size_t>(67 - std::countl_zero(size)) / 4;
    for (size_t i = count; i-- > 0; size >>= 4) out[i] = digits[size & 0xf];
    out[count] = '\r';
    out[count + 1] = '\n';
    return {out, count + 2};
}

}  // namespace portico::http
