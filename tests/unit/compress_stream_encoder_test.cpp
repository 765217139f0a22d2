// The three encoders behind StreamEncoder, checked by decoding with the
// libraries' decoders: a flush makes everything taken so far decodable (what
// keeps a compressed event stream live), any output room works, and a
// finished stream decodes to exactly the input.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "compress/stream_encoder.hpp"
#include "content_decoder.hpp"

using namespace portico;
using compress::StreamEncoder;
using config::Coding;

namespace {

// Text that compresses, with enough variety to take several blocks.
std::string sample_text(size_t size) {
    std::string text;
    for (unsigned i = 0; text.size() < size; ++i)
        text += "{\"id\": " + std::to_string(i * 7919 % 10007) + ", \"name\": \"item " +
                std::to_string(i) + "\"},\n";
    text.resize(size);
    return text;
}

// Runs one mode to completion with `room` bytes of output at a time.
std::string run(StreamEncoder& encoder, std::string_view input, StreamEncoder::Mode mode,
                size_t room) {
    std::string out;
    std::string buffer(room, '\0');
    for (int calls = 0;; ++calls) {
        REQUIRE(calls < 1000000);
        std::span<char> space(buffer.data(), buffer.size());
        bool done = encoder.compress(input, space, mode);
        REQUIRE_FALSE(encoder.failed());
        out.append(buffer.data(), buffer.size() - space.size());
        if (done) return out;
        REQUIRE(space.empty());  // false only when the room filled
    }
}

}  // namespace

TEST_CASE("each flush makes everything sent so far decodable", "[compress]") {
    for (Coding coding : config::codings_by_preference) {
        for (size_t room : {size_t{7}, size_t{1000}, size_t{64 * 1024}}) {
            INFO(config::coding_name(coding) << ", output room " << room);
            auto encoder = compress::make_encoder(coding, coding == Coding::br ? 4 : 3, {});
            REQUIRE(encoder);
            test::ContentDecoder decoder(config::coding_name(coding));
            std::string sent;
            for (const std::string& event :
                 {std::string("data: first event\n\n"), sample_text(70 * 1024),
                  std::string("data: x\n\n")}) {
                sent += event;
                REQUIRE(decoder.feed(run(*encoder, event, StreamEncoder::Mode::flush, room)));
                CHECK(decoder.output() == sent);
                CHECK_FALSE(decoder.finished());
            }
            // A flush with nothing new adds nothing a decoder would see.
            REQUIRE(decoder.feed(run(*encoder, "", StreamEncoder::Mode::flush, room)));
            CHECK(decoder.output() == sent);
            REQUIRE(decoder.feed(run(*encoder, "", StreamEncoder::Mode::finish, room)));
            CHECK(decoder.finished());
            CHECK(decoder.output() == sent);
        }
    }
}

TEST_CASE("taken input comes out by the next flush or the finish", "[compress]") {
    const std::string text = sample_text(200 * 1024);
    for (Coding coding : config::codings_by_preference) {
        INFO(config::coding_name(coding));
        auto encoder = compress::make_encoder(coding, 1, {});
        REQUIRE(encoder);
        std::string out;
        for (size_t at = 0; at < text.size(); at += 3000)
            out += run(*encoder, std::string_view(text).substr(at, 3000), StreamEncoder::Mode::take, 512);
        out += run(*encoder, "", StreamEncoder::Mode::finish, 512);
        CHECK(test::decode_body(config::coding_name(coding), out) == text);
        CHECK(out.size() < text.size() / 3);
    }
}

TEST_CASE("compress_whole decodes to its input, empty and incompressible ones too", "[compress]") {
    std::string noise;
    uint32_t state = 12345;
    for (int i = 0; i < 50000; ++i) {
        state = state * 1103515245 + 12345;
        noise.push_back(static_cast<char>(state >> 24));
    }
    for (Coding coding : config::codings_by_preference) {
        for (const std::string& input : {std::string(), std::string("a"), sample_text(300 * 1024), noise}) {
            INFO(config::coding_name(coding) << ", " << input.size() << " bytes");
            std::optional<std::string> compressed = compress::compress_whole(coding, 5, input);
            REQUIRE(compressed);
            CHECK(test::decode_body(config::coding_name(coding), *compressed) == input);
        }
    }
}

TEST_CASE("every level the config accepts works", "[compress]") {
    const std::string text = sample_text(20 * 1024);
    struct Range {
        Coding coding;
        int low, high;
    };
    for (Range range : {Range{Coding::gzip, 1, 9}, Range{Coding::br, 0, 11}, Range{Coding::zstd, 1, 19}}) {
        for (int level = range.low; level <= range.high; ++level) {
            INFO(config::coding_name(range.coding) << " level " << level);
            std::optional<std::string> compressed = compress::compress_whole(range.coding, level, text);
            REQUIRE(compressed);
            CHECK(test::decode_body(config::coding_name(range.coding), *compressed) == text);
        }
    }
}
