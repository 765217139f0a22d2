// One compressed stream, whatever the coding: zlib for gzip, libbrotli for
// br, libzstd for zstd behind one interface, so the filter and the static
// cache never branch on the library.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "compress/encoder_memory.hpp"
#include "config/coding.hpp"

namespace portico::compress {

class StreamEncoder {
public:
    enum class Mode {
        take,    // compress what comes; output may lag behind
        flush,   // ...and let everything taken so far out, decodable now
        finish,  // ...and end the stream
    };
    virtual ~StreamEncoder() = default;

    // Compresses from `input` into `output`, advancing both past what was
    // taken and written. True once all of `input` is taken and what `mode`
    // asks is complete; false when `output` filled first (call again, same
    // mode, the rest of the input, more room) or the library failed
    // (failed()). A flush or finish must be completed before the next call
    // with another mode.
    virtual bool compress(std::string_view& input, std::span<char>& output, Mode mode) = 0;
    bool failed() const { return failed_; }

protected:
    bool failed_ = false;
};

// `whole_size`: the input's whole size when it is known (a file compressed
// once), which lets the library size its window to it; 0 for a stream of
// unknown length, which gets a smaller window so that a long-lived stream
// (server-sent events) holds less memory. `memory`: where gzip's and br's
// state comes from and goes back to (the worker's; nullptr: malloc). The
// encoder must be gone before it. nullptr when out of memory.
std::unique_ptr<StreamEncoder> make_encoder(config::Coding coding, int level, uint64_t whole_size,
                                            EncoderMemory* memory = nullptr);

// `input` compressed whole; nullopt when the library failed.
std::optional<std::string> compress_whole(config::Coding coding, int level, std::string_view input);

// One per library (gzip_encoder.cpp, brotli_encoder.cpp, zstd_encoder.cpp).
std::unique_ptr<StreamEncoder> make_gzip_encoder(int level, EncoderMemory* memory);
std::unique_ptr<StreamEncoder> make_brotli_encoder(int level, uint64_t whole_size, EncoderMemory* memory);
std::unique_ptr<StreamEncoder> make_zstd_encoder(int level, uint64_t whole_size);

}  // namespace portico::compress
