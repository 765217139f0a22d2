#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <vector>

#include "core/small_blocks.hpp"

namespace blocks = portico::core::small_blocks;

namespace {

bool aligned_16(const void* block) { return reinterpret_cast<uintptr_t>(block) % 16 == 0; }

}  // namespace

TEST_CASE("small blocks of every class and beyond hold their size, aligned, without overlap", "[core]") {
    // Sizes at and around each class edge (64 .. 2048) and past the last.
    std::vector<size_t> sizes = {1, 63, 64, 65, 127, 128, 129, 500, 1024, 1025, 2047, 2048, 2049, 100000};
    std::vector<unsigned char*> live;
    for (int round = 0; round < 3; ++round) {
        for (size_t i = 0; i < sizes.size(); ++i) {
            auto* block = static_cast<unsigned char*>(blocks::allocate(sizes[i]));
            REQUIRE(block != nullptr);
            CHECK(aligned_16(block));
            std::memset(block, static_cast<int>(i + 1), sizes[i]);
            live.push_back(block);
        }
        // Every block still holds its own bytes: none was handed out twice.
        for (size_t i = 0; i < live.size(); ++i) {
            size_t size = sizes[i % sizes.size()];
            auto expected = static_cast<unsigned char>(i % sizes.size() + 1);
            CHECK(live[i][0] == expected);
            CHECK(live[i][size - 1] == expected);
        }
        // Half go back, so the next round takes recycled blocks.
        for (size_t i = 0; i < live.size(); i += 2) blocks::release(live[i]);
        std::vector<unsigned char*> kept;
        for (size_t i = 1; i < live.size(); i += 2) kept.push_back(live[i]);
        for (unsigned char* block : kept) blocks::release(block);
        live.clear();
    }
    blocks::release(nullptr);  // as free(nullptr)
}

TEST_CASE("small blocks: zeroed blocks are zero, a reallocated block keeps its bytes", "[core]") {
    auto* dirty = static_cast<unsigned char*>(blocks::allocate(200));
    std::memset(dirty, 0xAB, 200);
    blocks::release(dirty);
    auto* zeroed = static_cast<unsigned char*>(blocks::allocate_zeroed(25, 8));
    REQUIRE(zeroed != nullptr);
    for (size_t i = 0; i < 200; ++i) REQUIRE(zeroed[i] == 0);
    CHECK(blocks::allocate_zeroed(SIZE_MAX / 2, 4) == nullptr);  // the product overflows
    blocks::release(zeroed);

    auto* block = static_cast<unsigned char*>(blocks::reallocate(nullptr, 10));
    for (unsigned char i = 0; i < 10; ++i) block[i] = i;
    for (size_t size : {60, 100, 3000, 50, 5000}) {
        block = static_cast<unsigned char*>(blocks::reallocate(block, size));
        REQUIRE(block != nullptr);
        for (unsigned char i = 0; i < 10; ++i) REQUIRE(block[i] == i);
    }
    blocks::release(block);
}
