// Recycled small blocks for objects that live as long as one request and
// come and go by the hundred: HTTP/2 streams, and nghttp2's own stream,
// frame and header allocations (through nghttp2_mem).
//
// Why not plain malloc: glibc's per-thread cache keeps 7 free blocks per
// size, so with 100 streams in flight on a worker most frees and mallocs
// take its slow paths (_int_free, _int_malloc: about 200 instructions a
// pair). Here a block goes back on its size class's free list and comes
// off it for the next request, a few instructions each way.
//
// One set of free lists per thread (a worker is one loop on one thread),
// each holding at most `max_free_per_class` blocks, so a burst gives its
// memory back to malloc afterwards. Under AddressSanitizer blocks go
// straight to malloc, so a use after free is still caught.
#pragma once

#include <cstddef>

namespace portico::core::small_blocks {

void* allocate(size_t size);
void* allocate_zeroed(size_t count, size_t size);
// A block from allocate (or nullptr); its contents kept up to the smaller size.
void* reallocate(void* block, size_t size);
void release(void* block);

}  // namespace portico::core::small_blocks
