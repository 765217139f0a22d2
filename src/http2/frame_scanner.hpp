// Finds the client's frame headers in its byte stream as it arrives, so the
// session can check a frame against the streams' state just before nghttp2
// takes it: nghttp2 drops DATA on a stream it has forgotten without a
// callback (RFC 9113 5.1 makes that a connection error).
#pragma once

#include <cstddef>
#include <cstdint>

namespace portico::http2 {

class FrameScanner {
public:
    struct Header {
        uint32_t length = 0;
        uint8_t type = 0;
        int32_t stream_id = 0;
    };

    struct Scan {
        size_t end;  // just past the header found, or the end of the bytes
        bool found;
        Header header;  // when found
    };
    // Scans bytes[from, size) up to the end of the next complete frame
    // header of `type`. The connection preface's 24 bytes come first and
    // are skipped.
    Scan next(const char* bytes, size_t from, size_t size, uint8_t type);

private:
    static constexpr size_t preface_size = 24;
    static constexpr size_t header_size = 9;
    size_t preface_left_ = preface_size;
    uint64_t payload_left_ = 0;
    uint8_t header_[header_size] = {};
    size_t header_have_ = 0;
};

}  // namespace portico::http2
