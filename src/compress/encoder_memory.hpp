// The memory of finished encoders, kept for the next ones of the worker.
// zlib and brotli ask for the same few sizes for every stream of a level
// (gzip: 5 blocks, 261 KiB; br level 6: 37, 1.6 MiB at most) and give them
// back when the response ends. From malloc, the large ones are unmapped, or
// the heap trimmed, and their pages faulted in again by the next response:
// measured on a 100 KiB JSON in br level 6, 160 page faults (0.6 MiB) and
// about 15 % of the response's CPU. Kept here by size, last freed first
// out, they come back mapped and warm in the cache.
#pragma once

#include <cstddef>
#include <unordered_map>
#include <vector>

namespace portico::compress {

class EncoderMemory {
public:
    // At most `max_kept` bytes wait for reuse; the rest goes back to malloc.
    explicit EncoderMemory(size_t max_kept) : max_kept_(max_kept) {}
    ~EncoderMemory();
    EncoderMemory(const EncoderMemory&) = delete;
    EncoderMemory& operator=(const EncoderMemory&) = delete;

    // nullptr when out of memory.
    void* allocate(size_t size);
    void release(void* address);  // nullptr is ignored
    size_t kept_bytes() const { return kept_bytes_; }

    // The libraries' callbacks; `opaque` is the EncoderMemory.
    static void* brotli_allocate(void* opaque, size_t size);
    static void brotli_release(void* opaque, void* address);
    static void* zlib_allocate(void* opaque, unsigned items, unsigned size);
    static void zlib_release(void* opaque, void* address);

private:
    std::unordered_map<size_t, std::vector<void*>> kept_;  // by size, blocks with their header
    size_t kept_bytes_ = 0;
    size_t max_kept_;
};

}  // namespace portico::compress
