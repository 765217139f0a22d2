#include "core/buffer_pool.hpp"

namespace portico::core {

BufferPool::~BufferPool() {
    for (char* block : free_) delete[] block;
}

char* BufferPool::acquire() {
    if (free_.empty()) return new char[block_size_];
    char* block = free_.back();
    free_.pop_back();
    return block;
}

void BufferPool::release(char* block) {
    if (block == nullptr) return;
    if (free_.size() >= max_free_blocks) {
        delete[] block;
        return;
    }
    free_.push_back(block);
}

}  // namespace portico::core
