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

// What an encoder is told of its input, so that the library can size its
// window and tables to it.
struct InputSize {
    uint64_t bytes = 0;  // 0: unknown (a chunked response, server-sent events)
    bool whole = false;  // given in one call, finished at once (a file compressed once)

    static InputSize whole_input(uint64_t bytes) { return {bytes, true}; }
    // A stream flushed block by block; `length`: its Content-Length, if any.
    static InputSize stream(std::optional<uint64_t> length) { return {length.value_or(0), false}; }
};

// `size`: see InputSize. A stream of unknown length gets a smaller window,
// so that a long-lived one (server-sent events) holds less memory; one of
// known length, a window no larger than itself, within a bound (as nginx's
// brotli filter does). `memory`: where gzip's and br's state comes from and
// goes back to (the worker's; nullptr: malloc). The encoder must be gone
// before it. nullptr when out of memory.
std::unique_ptr<StreamEncoder> make_encoder(config::Coding coding, int level, InputSize size,
                                            EncoderMemory* memory = nullptr);

// `input` compressed whole; nullopt when the library failed.
std::optional<std::string> compress_whole(config::Coding coding, int level, std::string_view input);

// One per library (gzip_encoder.cpp, brotli_encoder.cpp, zstd_encoder.cpp).
std::unique_ptr<StreamEncoder> make_gzip_encoder(int level, EncoderMemory* memory);
std::unique_ptr<StreamEncoder> make_brotli_encoder(int level, InputSize size, EncoderMemory* memory);
std::unique_ptr<StreamEncoder> make_zstd_encoder(int level, InputSize size);

}  // namespace portico::compress
