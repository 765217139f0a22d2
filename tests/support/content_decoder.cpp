#include "content_decoder.hpp"

#include <brotli/decode.h>
#include <zlib.h>
#include <zstd.h>

namespace portico::test {

class ContentDecoder::Library {
public:
    virtual ~Library() = default;
    // Appends what `bytes` decode to; sets `finished` at the stream's end.
    virtual bool decode(std::string_view bytes, std::string& out, bool& finished) = 0;
};

namespace {

constexpr size_t piece_size = 16 * 1024;

class GzipLibrary final : public ContentDecoder::Library {
public:
    GzipLibrary() { inflateInit2(&stream_, 15 + 16); }  // gzip wrapper only
    ~GzipLibrary() override { inflateEnd(&stream_); }
    bool decode(std::string_view bytes, std::string& out, bool& finished) override {
        stream_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
        stream_.avail_in = static_cast<uInt>(bytes.size());
        do {
            char piece[piece_size];
            stream_.next_out = reinterpret_cast<Bytef*>(piece);
            stream_.avail_out = sizeof piece;
            int result = inflate(&stream_, Z_SYNC_FLUSH);
            out.append(piece, sizeof piece - stream_.avail_out);
            if (result == Z_STREAM_END) {
                finished = true;
                return stream_.avail_in == 0;  // nothing may follow the trailer
            }
            if (result != Z_OK && result != Z_BUF_ERROR) return false;
            if (result == Z_BUF_ERROR && stream_.avail_out != 0) break;  // needs more input
        } while (stream_.avail_in > 0 || stream_.avail_out == 0);
        return true;
    }

private:
    z_stream stream_{};
};

class BrotliLibrary final : public ContentDecoder::Library {
public:
    BrotliLibrary() : state_(BrotliDecoderCreateInstance(nullptr, nullptr, nullptr)) {}
    ~BrotliLibrary() override { BrotliDecoderDestroyInstance(state_); }
    bool decode(std::string_view bytes, std::string& out, bool& finished) override {
        size_t available_in = bytes.size();
        const auto* next_in = reinterpret_cast<const uint8_t*>(bytes.data());
        for (;;) {
            uint8_t piece[piece_size];
            size_t available_out = sizeof piece;
            uint8_t* next_out = piece;
            BrotliDecoderResult result = BrotliDecoderDecompressStream(
                state_, &available_in, &next_in, &available_out, &next_out, nullptr);
            out.append(reinterpret_cast<char*>(piece), sizeof piece - available_out);
            if (result == BROTLI_DECODER_RESULT_SUCCESS) {
                finished = true;
                return available_in == 0;
            }
            if (result == BROTLI_DECODER_RESULT_ERROR) return false;
            // Asking for input with the piece full may still hold output
            // back (libbrotli 1.0.9 pushes its ring buffer only as far as
            // the piece goes): call again until a piece is left with room.
            if (result == BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT && available_out != 0) return true;
        }
    }

private:
    BrotliDecoderState* state_;
};

class ZstdLibrary final : public ContentDecoder::Library {
public:
    ZstdLibrary() : context_(ZSTD_createDCtx()) {}
    ~ZstdLibrary() override { ZSTD_freeDCtx(context_); }
    bool decode(std::string_view bytes, std::string& out, bool& finished) override {
        ZSTD_inBuffer in{bytes.data(), bytes.size(), 0};
        for (;;) {
            char piece[piece_size];
            ZSTD_outBuffer piece_out{piece, sizeof piece, 0};
            size_t hint = ZSTD_decompressStream(context_, &piece_out, &in);
            if (ZSTD_isError(hint)) return false;
            out.append(piece, piece_out.pos);
            if (hint == 0) {
                // A frame ended; RFC 9659 allows several, portico sends one.
                finished = true;
                return in.pos == in.size;
            }
            if (in.pos == in.size && piece_out.pos < piece_out.size) return true;
        }
    }

private:
    ZSTD_DCtx* context_;
};

}  // namespace

ContentDecoder::ContentDecoder(std::string_view coding) {
    if (coding == "gzip") library_ = std::make_unique<GzipLibrary>();
    else if (coding == "br") library_ = std::make_unique<BrotliLibrary>();
    else if (coding == "zstd") library_ = std::make_unique<ZstdLibrary>();
}

ContentDecoder::~ContentDecoder() = default;

bool ContentDecoder::feed(std::string_view bytes) {
    if (!library_ || (finished_ && !bytes.empty())) return false;
    return library_->decode(bytes, output_, finished_);
}

std::optional<std::string> decode_body(std::string_view coding, std::string_view body) {
    ContentDecoder decoder(coding);
    if (!decoder.feed(body) || !decoder.finished()) return std::nullopt;
    return decoder.output();
}

}  // namespace portico::test
