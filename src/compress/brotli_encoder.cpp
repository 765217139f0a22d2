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
constexpr int streamed_window_bits = 16;

// A whole input needs no window larger than itself (brotli's range: 10..24).
uint32_t window_bits_for(uint64_t whole_size) {
    uint32_t bits = 10;
    while (bits < 24 && (uint64_t{1} << bits) < whole_size) ++bits;
    return bits;
}

class BrotliEncoder final : public StreamEncoder {
public:
    BrotliEncoder(int level, uint64_t whole_size, EncoderMemory* memory)
        : state_(memory ? BrotliEncoderCreateInstance(EncoderMemory::brotli_allocate,
                                                      EncoderMemory::brotli_release, memory)
                        : BrotliEncoderCreateInstance(nullptr, nullptr, nullptr)) {
        if (!state_) return;
        BrotliEncoderSetParameter(state_, BROTLI_PARAM_QUALITY, static_cast<uint32_t>(level));
        BrotliEncoderSetParameter(state_, BROTLI_PARAM_LGWIN,
                                  whole_size == 0 ? streamed_window_bits : window_bits_for(whole_size));
        if (whole_size > 0)  // picks the hash tables for the input's size
            BrotliEncoderSetParameter(state_, BROTLI_PARAM_SIZE_HINT,
                                      static_cast<uint32_t>(std::min<uint64_t>(whole_size, 1u << 30)));
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

std::unique_ptr<StreamEncoder> make_brotli_encoder(int level, uint64_t whole_size,
                                                   EncoderMemory* memory) {
    auto encoder = std::make_unique<BrotliEncoder>(level, whole_size, memory);
    if (!encoder->initialized()) return nullptr;
    return encoder;
}

}  // namespace portico::compress
