// zstd (RFC 8878, as a content coding RFC 9659) with libzstd.
#include <zstd.h>

#include "compress/stream_encoder.hpp"

namespace portico::compress {

namespace {

// A stream, of known length or not: a 256 KiB window (level 3 would take 2 MiB)
// and, from level 3 up, match tables of 2^16 and 2^15 entries, so a
// long-lived stream keeps about 1.4 MiB whatever the level (measured: 2 MiB
// with level 3's own tables and a 512 KiB window, for a 3 % better ratio on
// JSON flushed every 16 KiB; level 19's own tables take 84 MiB, and with
// these it still searches harder). Whole bodies get the level's own
// parameters (a stream's Content-Length is not pledged: libzstd would fail
// the stream if an upstream sent less). RFC 9659 caps the window a client must accept at 8 MiB;
// levels up to 19 stay below it.
constexpr int streamed_window_log = 18;
constexpr int streamed_hash_log = 16;
constexpr int streamed_chain_log = 15;

class ZstdEncoder final : public StreamEncoder {
public:
    ZstdEncoder(int level, InputSize size) : context_(ZSTD_createCCtx()) {
        if (!context_) return;
        ZSTD_CCtx_setParameter(context_, ZSTD_c_compressionLevel, level);
        if (!size.whole || size.bytes == 0) {
            ZSTD_CCtx_setParameter(context_, ZSTD_c_windowLog, streamed_window_log);
            if (level >= 3) {
                ZSTD_CCtx_setParameter(context_, ZSTD_c_hashLog, streamed_hash_log);
                ZSTD_CCtx_setParameter(context_, ZSTD_c_chainLog, streamed_chain_log);
            }
        } else {
            ZSTD_CCtx_setPledgedSrcSize(context_, size.bytes);  // a window sized to it
        }
    }
    ~ZstdEncoder() override { ZSTD_freeCCtx(context_); }
    ZstdEncoder(const ZstdEncoder&) = delete;
    ZstdEncoder& operator=(const ZstdEncoder&) = delete;

    bool initialized() const { return context_ != nullptr; }

    bool compress(std::string_view& input, std::span<char>& output, Mode mode) override {
        ZSTD_inBuffer in{input.data(), input.size(), 0};
        ZSTD_outBuffer out{output.data(), output.size(), 0};
        ZSTD_EndDirective directive = mode == Mode::take    ? ZSTD_e_continue
                                      : mode == Mode::flush ? ZSTD_e_flush
                                                            : ZSTD_e_end;
        size_t left = ZSTD_compressStream2(context_, &out, &in, directive);
        input.remove_prefix(in.pos);
        output = output.subspan(out.pos);
        if (ZSTD_isError(left)) {
            failed_ = true;
            return false;
        }
        // For a flush or the end, 0 means nothing is left inside.
        return input.empty() && (mode == Mode::take || left == 0);
    }

private:
    ZSTD_CCtx* context_;
};

}  // namespace

std::unique_ptr<StreamEncoder> make_zstd_encoder(int level, InputSize size) {
    auto encoder = std::make_unique<ZstdEncoder>(level, size);
    if (!encoder->initialized()) return nullptr;
    return encoder;
}

}  // namespace portico::compress
