#include "core/small_blocks.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#if defined(__SANITIZE_ADDRESS__)
#define PORTICO_SMALL_BLOCKS_POOLED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PORTICO_SMALL_BLOCKS_POOLED 0
#endif
#endif
#ifndef PORTICO_SMALL_BLOCKS_POOLED
#define PORTICO_SMALL_BLOCKS_POOLED 1
#endif

namespace portico::core::small_blocks {

namespace {

// Size classes 64, 128, ..., 2048 bytes; larger blocks are malloc's.
constexpr size_t class_count = 6;
constexpr size_t smallest_class = 64;
constexpr size_t max_free_per_class = 256;
constexpr uint32_t unpooled = UINT32_MAX;

// Before each block: its class, or `unpooled` and the size asked for.
// 16 bytes, so the block keeps malloc's alignment.
struct alignas(16) Header {
    uint32_t size_class;
    size_t size;
};

struct FreeBlock {
    FreeBlock* next;
};

// Zero-initialised, no constructor: no guard on each thread_local access.
struct FreeLists {
    FreeBlock* head[class_count];
    uint32_t count[class_count];
};
thread_local FreeLists free_lists;

// The smallest class that holds `size` (at most the largest class's capacity).
uint32_t class_of(size_t size) {
    if (size <= smallest_class) return 0;
    return static_cast<uint32_t>(64 - __builtin_clzll((size - 1) / smallest_class));
}

size_t capacity_of(uint32_t size_class) { return smallest_class << size_class; }

void* from_malloc(size_t size, uint32_t size_class) {
    size_t bytes = size_class == unpooled ? size : capacity_of(size_class);
    auto* header = static_cast<Header*>(std::malloc(sizeof(Header) + bytes));
    if (!header) return nullptr;
    header->size_class = size_class;
    header->size = size;
    return header + 1;
}

Header* header_of(void* block) { return static_cast<Header*>(block) - 1; }

}  // namespace

void* allocate(size_t size) {
    if (!PORTICO_SMALL_BLOCKS_POOLED || size > capacity_of(class_count - 1))
        return from_malloc(size, unpooled);
    uint32_t size_class = class_of(size);
    if (FreeBlock* block = free_lists.head[size_class]) {
        free_lists.head[size_class] = block->next;
        --free_lists.count[size_class];
        return block;
    }
    return from_malloc(size, size_class);
}

void* allocate_zeroed(size_t count, size_t size) {
    if (size != 0 && count > SIZE_MAX / size) return nullptr;
    void* block = allocate(count * size);
    if (block) std::memset(block, 0, count * size);
    return block;
}

void release(void* block) {
    if (!block) return;
    Header* header = header_of(block);
    uint32_t size_class = header->size_class;
    if (size_class == unpooled || free_lists.count[size_class] >= max_free_per_class) {
        std::free(header);
        return;
    }
    auto* free_block = static_cast<FreeBlock*>(block);
    free_block->next = free_lists.head[size_class];
    free_lists.head[size_class] = free_block;
    ++free_lists.count[size_class];
}

void* reallocate(void* block, size_t size) {
    if (!block) return allocate(size);
    Header* header = header_of(block);
    size_t capacity = header->size_class == unpooled ? header->size : capacity_of(header->size_class);
    if (size <= capacity && header->size_class != unpooled) return block;
    void* moved = allocate(size);
    if (!moved) return nullptr;
    std::memcpy(moved, block, capacity < size ? capacity : size);
    release(block);
    return moved;
}

}  // namespace portico::core::small_blocks
