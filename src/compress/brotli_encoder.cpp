// br (RFC 7932) with libbrotli.
#include <brotli/encode.h>

#include <algorithm>

#include "compress/stream_encoder.hpp"

namespace portico::compress {

namespace {

// A stream of unknown length: a 64 KiB window (brotli's default is 4 MiB,
// allocated as the stream grows), so a long-lived stream keeps about 1 MiB
// at quality 4 (measured; 1.3 MiB with 256 KiB, for no better ratio on
// JSON flushed every few KiB).
constexpr uint32_t streamed_window_bits = 16;
// A stream of known length (a proxied response with Content-Length): a
// window no larger than it, at most 512 KiB (nginx's brotli filter does
// the same, up to its brotli_window), at qualities up to 6. Past 64 KiB
// libbrotli changes match finder from quality 5 up: on the bench's 100 KiB
// JSON at quality 6 a 128 KiB window takes 4 % fewer instructions
// (callgrind, 13.6M against 14.2M) for 3 % more bytes, and the encoder
// holds 3.3 MiB instead of 1.6 (4.0 MiB with 512 KiB; quality 4: 1.7 and
// 2.5). From quality 7 the larger window's tables take 9 MiB (7) to 33 MiB
// (9) per stream, for a worse ratio on that JSON: those keep 64 KiB. No
// size hint for a stream either: from 1 MiB it makes quality 4 take 4 MiB
// tables (6 MiB in all, measured).
constexpr uint32_t max_stream_window_bits = 19;
constexpr int max_quality_for_stream_window = 6;

// No window larger than the input, in brotli's range 10..`max_bits`.
uint32_t window_bits_for(uint64_t size, uint32_t max_bits) {
    uint32_t bits = 10;
    while (bits < max_bits && (uint64_t{1} << bits) < size) ++bits;
    return bits;
}

uint32_t window_bits_for(InputSize size, int level) {
    if (size.whole) return window_bits_for(size.bytes, 24);
    if (size.bytes == 0 || level > max_quality_for_stream_window) return streamed_window_bits;
    return window_bits_for(size.bytes, max_stream_window_bits);
}

class BrotliEncoder final : public StreamEncoder {
public:
    BrotliEncoder(int level, InputSize size, EncoderMemory* memory)
        : state_(memory ? BrotliEncoderCreateInstance(EncoderMemory::brotli_allocate,
                                                      EncoderMemory::brotli_release, memory)
                        : BrotliEncoderCreateInstance(nullptr, nullptr, nullptr)) {
        if (!state_) return;
        BrotliEncoderSetParameter(state_, BROTLI_PARAM_QUALITY, static_cast<uint32_t>(level));
        BrotliEncoderSetParameter(state_, BROTLI_PARAM_LGWIN, window_bits_for(size, level));
        if (size.whole)  // picks the hash tables for the input's size
            BrotliEncoderSetParameter(state_, BROTLI_PARAM_SIZE_HINT,
                                      static_cast<uint32_t>(std::min<uint64_t>(size.bytes, 1u << 30)));
    }
    ~BrotliEncoder() override {
        if (state_) BrotliEncoderDestroyInstance(state_);
    }
    BrotliEncoder(const BrotliEncoder&) = delete;
    BrotliEncoder& operator=(const BrotliEncoder&) = delete;

    bool initialized() const { return state_ != nullptr; }

    bool compress(std::string_view& input, std::span<char>& output, Mode mode) override {
        size_t available_in = input.size();
        const auto* next_in = reinterpret_cast<const uint8_t*>(input.data());
        size_t available_out = output.size();
        auto* next_out = reinterpret_cast<uint8_t*>(output.data());
        BrotliEncoderOperation operation = mode == Mode::take    ? BROTLI_OPERATION_PROCESS
                                           : mode == Mode::flush ? BROTLI_OPERATION_FLUSH
                                                                 : BROTLI_OPERATION_FINISH;
        bool ok = BrotliEncoderCompressStream(state_, operation, &available_in, &next_in,
                                              &available_out, &next_out, nullptr);
        input.remove_prefix(input.size() - available_in);
        output = output.subspan(output.size() - available_out);
        if (!ok) {
            failed_ = true;
            return false;
        }
        if (mode == Mode::finish) return BrotliEncoderIsFinished(state_);
        return input.empty() && (mode == Mode::take || !BrotliEncoderHasMoreOutput(state_));
    }

private:
    BrotliEncoderState* state_;
};

}  // namespace

std::unique_ptr<StreamEncoder> make_brotli_encoder(int level, InputSize size, EncoderMemory* memory) {
    auto encoder = std::make_unique<BrotliEncoder>(level, size, memory);
    if (!encoder->initialized()) return nullptr;
    return encoder;
}

}  // namespace portico::compress
