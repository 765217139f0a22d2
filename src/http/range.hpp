// Range: bytes=... (RFC 9110 14.2) for one file of a known size.
#pragma once

#include <cstdint>
#include <string_view>

namespace portico::http {

struct ByteRange {
    enum class Kind {
        whole,          // no Range, one we ignore (not bytes, malformed), or several ranges
        partial,        // one satisfiable range: 206
        unsatisfiable,  // one range past the end: 416 with Content-Range: bytes */SIZE
    };
    Kind kind = Kind::whole;
    uint64_t first = 0;  // inclusive
    uint64_t last = 0;   // inclusive
    uint64_t length() const { return last - first + 1; }
};

// Parses a Range header value against a file of `size` bytes. Several ranges
// are answered with the whole file (the spec allows it; no multipart).
ByteRange parse_byte_range(std::string_view header, uint64_t size);

}  // namespace portico::http
