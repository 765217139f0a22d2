#include "compress/stream_encoder.hpp"

namespace portico::compress {

std::unique_ptr<StreamEncoder> make_encoder(config::Coding coding, int level, InputSize size,
                                            EncoderMemory* memory) {
    switch (coding) {
    case config::Coding::br: return make_brotli_encoder(level, size, memory);
    // Custom allocators are in zstd's experimental API (ZSTD_customMem):
    // its contexts come from malloc.
    case config::Coding::zstd: return make_zstd_encoder(level, size);
    case config::Coding::gzip: return make_gzip_encoder(level, memory);
    }
    return nullptr;
}

std::optional<std::string> compress_whole(config::Coding coding, int level, std::string_view input) {
    std::unique_ptr<StreamEncoder> encoder = make_encoder(coding, level, InputSize::whole_input(input.size()));
    if (!encoder) return std::nullopt;
    // Text shrinks to a fraction; the output grows when it does not.
    std::string output(input.size() / 2 + 128, '\0');
    size_t written = 0;
    for (;;) {
        std::span<char> room(output.data() + written, output.size() - written);
        size_t before = room.size();
        bool done = encoder->compress(input, room, StreamEncoder::Mode::finish);
        written += before - room.size();
        if (done) break;
        if (encoder->failed()) return std::nullopt;
        output.resize(output.size() * 2);
    }
    output.resize(written);
    output.shrink_to_fit();
    return output;
}

}  // namespace portico::compress
