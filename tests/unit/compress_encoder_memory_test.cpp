// The worker's encoder memory: a freed block of a size comes back for the
// next request of that size, the bound holds, and encoders built on it (one
// after another, as streams follow each other) still decode to their input.
#include <catch2/catch.hpp>

#include <string>

#include "compress/encoder_memory.hpp"
#include "compress/stream_encoder.hpp"
#include "content_decoder.hpp"

using namespace portico;
using compress::EncoderMemory;
using compress::StreamEncoder;
using config::Coding;

TEST_CASE("a released block is reused for the same size, within the bound", "[compress]") {
    EncoderMemory memory(1000);
    void* first = memory.allocate(600);
    REQUIRE(first != nullptr);
    memory.release(first);
    CHECK(memory.kept_bytes() == 600);
    void* other_size = memory.allocate(100);
    CHECK(other_size != first);  // another size: a new block
    void* again = memory.allocate(600);
    CHECK(again == first);
    CHECK(memory.kept_bytes() == 0);
    void* second = memory.allocate(600);
    memory.release(again);
    memory.release(second);  // 1,200 bytes would pass the bound: freed
    CHECK(memory.kept_bytes() == 600);
    memory.release(nullptr);
    memory.release(other_size);
}

TEST_CASE("gzip and br streams on the worker's memory decode, one after another", "[compress]") {
    std::string text;
    for (unsigned i = 0; text.size() < 100 * 1024; ++i)
        text += "{\"id\": " + std::to_string(i) + ", \"name\": \"user " + std::to_string(i * 7919 % 100003) + "\"},";
    EncoderMemory memory(8 * 1024 * 1024);
    for (Coding coding : {Coding::gzip, Coding::br}) {
        for (int stream = 0; stream < 3; ++stream) {
            INFO(config::coding_name(coding) << ", stream " << stream);
            auto encoder = compress::make_encoder(coding, 6, {}, &memory);
            REQUIRE(encoder);
            std::string out(text.size() + 1024, '\0');
            std::span<char> room(out.data(), out.size());
            std::string_view input = text;
            REQUIRE(encoder->compress(input, room, StreamEncoder::Mode::finish));
            out.resize(out.size() - room.size());
            CHECK(test::decode_body(config::coding_name(coding), out) == text);
            encoder.reset();
            CHECK(memory.kept_bytes() > 0);  // its state waits for the next stream
        }
    }
}
