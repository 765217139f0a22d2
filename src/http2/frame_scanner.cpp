#include "http2/frame_scanner.hpp"

#include <algorithm>
#include <cstring>

namespace portico::http2 {

FrameScanner::Scan FrameScanner::next(const char* bytes, size_t from, size_t size, uint8_t type) {
    size_t at = from;
    while (at < size) {
        if (preface_left_ > 0) {
            size_t skip = std::min(preface_left_, size - at);
            preface_left_ -= skip;
            at += skip;
            continue;
        }
        if (payload_left_ > 0) {
            size_t skip = static_cast<size_t>(std::min<uint64_t>(payload_left_, size - at));
            payload_left_ -= skip;
            at += skip;
            continue;
        }
        size_t take = std::min(header_size - header_have_, size - at);
        std::memcpy(header_ + header_have_, bytes + at, take);
        header_have_ += take;
        at += take;
        if (header_have_ < header_size) break;
        header_have_ = 0;
        Header header;
        header.length = uint32_t{header_[0]} << 16 | uint32_t{header_[1]} << 8 | header_[2];
        header.type = header_[3];
        header.stream_id =
            static_cast<int32_t>((uint32_t{header_[5]} << 24 | uint32_t{header_[6]} << 16 |
                                  uint32_t{header_[7]} << 8 | header_[8]) &
                                 0x7fffffffu);
        payload_left_ = header.length;
        if (header.type == type) return {at, true, header};
    }
    return {size, false, {}};
}

}  // namespace portico::http2
