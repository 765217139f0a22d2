// Decoders for the content codings portico sends (gzip with zlib, br with
// libbrotli, zstd with libzstd), so the tests compare decoded bytes with the
// original instead of trusting the encoder they test. Shared by the unit
// and integration tests.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace portico::test {

// Decodes one body as its bytes arrive: what was fed so far, decoded as far
// as the encoder flushed it (a compressed stream's event is readable before
// the stream ends).
class ContentDecoder {
public:
    // "gzip", "br" or "zstd"; any other name fails every feed.
    explicit ContentDecoder(std::string_view coding);
    ~ContentDecoder();
    ContentDecoder(const ContentDecoder&) = delete;
    ContentDecoder& operator=(const ContentDecoder&) = delete;

    // False when the bytes are not valid in the coding (or follow its end).
    bool feed(std::string_view bytes);
    const std::string& output() const { return output_; }
    // The coding's end of stream was decoded (gzip trailer, brotli's last
    // meta-block, zstd's last block).
    bool finished() const { return finished_; }

    class Library;

private:
    std::unique_ptr<Library> library_;
    std::string output_;
    bool finished_ = false;
};

// A whole body decoded; nullopt unless it is valid and complete.
std::optional<std::string> decode_body(std::string_view coding, std::string_view body);

}  // namespace portico::test
