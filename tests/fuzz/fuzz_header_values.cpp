// The header values the static handler reads: Range against a file size,
// If-None-Match / If-Modified-Since / If-Range against an ETag and a date,
// HTTP dates (Accept-Encoding has a target of its own). Any bytes in; a
// range inside the file, or the whole file, or "unsatisfiable" out; never a
// crash.
#include <ctime>
#include <string>
#include <string_view>

#include "core/http_date.hpp"
#include "fuzz_support.hpp"
#include "http/conditional.hpp"
#include "http/range.hpp"

using namespace portico::http;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t length) {
    if (length < 8) return 0;
    // The first 8 bytes pick the file size (0 included); the rest is the value.
    uint64_t size = 0;
    for (int i = 0; i < 8; ++i) size = size << 8 | data[i];
    size %= uint64_t{1} << 40;
    std::string_view value(reinterpret_cast<const char*>(data + 8), length - 8);

    ByteRange range = parse_byte_range(value, size);
    if (range.kind == ByteRange::Kind::partial) {
        FUZZ_CHECK(range.first <= range.last);
        FUZZ_CHECK(range.last < size);
        FUZZ_CHECK(range.length() <= size);
    }
    if (size == 0) FUZZ_CHECK(range.kind != ByteRange::Kind::partial);

    const time_t mtime = 1000000000;
    const std::string etag = make_etag({mtime, 5}, static_cast<off_t>(size));
    (void)not_modified(value, value, etag, mtime);
    (void)not_modified("", value, etag, mtime);
    (void)if_range_holds(value, etag, mtime);
    if (std::optional<time_t> when = portico::core::parse_http_date(value)) FUZZ_CHECK(*when >= 0);
    // Our own tag always matches itself, and "*" always matches.
    FUZZ_CHECK(none_match_fails(etag, etag));
    return 0;
}
