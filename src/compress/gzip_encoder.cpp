// gzip (RFC 1952) with zlib's deflate.
#include <zlib.h>

#include "compress/stream_encoder.hpp"

namespace portico::compress {

namespace {

class GzipEncoder final : public StreamEncoder {
public:
    GzipEncoder(int level, EncoderMemory* memory) {
        if (memory) {
            stream_.zalloc = EncoderMemory::zlib_allocate;
            stream_.zfree = EncoderMemory::zlib_release;
            stream_.opaque = memory;
        }
        // windowBits 15 + 16 asks for the gzip wrapper, which is what
        // Content-Encoding: gzip means (not zlib's own, not raw deflate);
        // memLevel 8 is zlib's default. The state is then 256 KiB, and the
        // window deflate can use is 32 KiB whatever the input.
        initialized_ = deflateInit2(&stream_, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK;
    }
    ~GzipEncoder() override {
        if (initialized_) deflateEnd(&stream_);
    }
    GzipEncoder(const GzipEncoder&) = delete;
    GzipEncoder& operator=(const GzipEncoder&) = delete;

    bool initialized() const { return initialized_; }

    bool compress(std::string_view& input, std::span<char>& output, Mode mode) override {
        stream_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data()));
        stream_.avail_in = static_cast<uInt>(input.size());
        stream_.next_out = reinterpret_cast<Bytef*>(output.data());
        stream_.avail_out = static_cast<uInt>(output.size());
        int flush = mode == Mode::take ? Z_NO_FLUSH : mode == Mode::flush ? Z_SYNC_FLUSH : Z_FINISH;
        int result = deflate(&stream_, flush);
        input.remove_prefix(input.size() - stream_.avail_in);
        output = output.subspan(output.size() - stream_.avail_out);
        // Z_BUF_ERROR only says no progress was possible (no room, or a
        // flush already complete): not a failure.
        if (result == Z_STREAM_ERROR || result == Z_MEM_ERROR) {
            failed_ = true;
            return false;
        }
        if (mode == Mode::finish) return result == Z_STREAM_END;
        // zlib: a flush is complete when it returns with room left over.
        return input.empty() && (mode == Mode::take || stream_.avail_out != 0);
    }

private:
    z_stream stream_{};
    bool initialized_ = false;
};

}  // namespace

std::unique_ptr<StreamEncoder> make_gzip_encoder(int level, EncoderMemory* memory) {
    auto encoder = std::make_unique<GzipEncoder>(level, memory);
    if (!encoder->initialized()) return nullptr;
    return encoder;
}

}  // namespace portico::compress
