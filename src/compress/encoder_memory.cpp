#include "compress/encoder_memory.hpp"

#include <cstdlib>

namespace portico::compress {

namespace {

// Each block starts with its size; the header keeps malloc's 16-byte
// alignment for what follows it.
constexpr size_t header_size = 16;

size_t size_of(void* block) { return *static_cast<size_t*>(block); }

}  // namespace

EncoderMemory::~EncoderMemory() {
    for (auto& [size, blocks] : kept_)
        for (void* block : blocks) std::free(block);
}

void* EncoderMemory::allocate(size_t size) {
    void* block = nullptr;
    auto found = kept_.find(size);
    if (found != kept_.end() && !found->second.empty()) {
        block = found->second.back();
        found->second.pop_back();
        kept_bytes_ -= size;
    } else {
        block = std::malloc(header_size + size);
        if (block == nullptr) return nullptr;
        *static_cast<size_t*>(block) = size;
    }
    return static_cast<char*>(block) + header_size;
}

void EncoderMemory::release(void* address) {
    if (address == nullptr) return;
    void* block = static_cast<char*>(address) - header_size;
    size_t size = size_of(block);
    if (kept_bytes_ + size > max_kept_) {
        std::free(block);
        return;
    }
    kept_[size].push_back(block);
    kept_bytes_ += size;
}

void* EncoderMemory::brotli_allocate(void* opaque, size_t size) {
    return static_cast<EncoderMemory*>(opaque)->allocate(size);
}

void EncoderMemory::brotli_release(void* opaque, void* address) {
    static_cast<EncoderMemory*>(opaque)->release(address);
}

void* EncoderMemory::zlib_allocate(void* opaque, unsigned items, unsigned size) {
    return static_cast<EncoderMemory*>(opaque)->allocate(static_cast<size_t>(items) * size);
}

void EncoderMemory::zlib_release(void* opaque, void* address) {
    static_cast<EncoderMemory*>(opaque)->release(address);
}

}  // namespace portico::compress
