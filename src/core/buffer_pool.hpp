// Fixed-size buffers for connections, recycled through a free list: a busy
// connection takes one per request without a malloc, and an idle keep-alive
// connection gives its buffers back, so it costs only its own small struct.
#pragma once

#include <cstddef>
#include <vector>

namespace portico::core {

class BufferPool {
public:
    explicit BufferPool(size_t block_size) : block_size_(block_size) {}
    ~BufferPool();
    BufferPool(const BufferPool&) = delete;
    BufferPool& operator=(const BufferPool&) = delete;

    char* acquire();
    void release(char* block);
    size_t block_size() const { return block_size_; }

private:
    // Blocks beyond this many stay with the allocator after a burst.
    static constexpr size_t max_free_blocks = 1024;
    size_t block_size_;
    std::vector<char*> free_;
};

}  // namespace portico::core
