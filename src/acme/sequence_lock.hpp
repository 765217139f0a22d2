// A slot in shared memory with one writer and many readers that never wait
// for it: the writer makes the slot's sequence odd, writes, and makes it
// even again; a reader copies and copies again when the sequence moved
// meanwhile (the ACME board, the OCSP staples' board).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace portico::acme {

// A sequence lock's writer: odd while the slot is being written.
class Writing {
public:
    explicit Writing(std::atomic<uint64_t>& sequence) : sequence_(sequence) {
        sequence_.fetch_add(1, std::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_release);
    }
    ~Writing() { sequence_.fetch_add(1, std::memory_order_release); }
    Writing(const Writing&) = delete;
    Writing& operator=(const Writing&) = delete;

private:
    std::atomic<uint64_t>& sequence_;
};

// Copies with `copy` until it saw one stable, even sequence; that sequence.
template <typename Copy>
uint64_t read_stable(const std::atomic<uint64_t>& sequence, Copy copy) {
    for (;;) {
        uint64_t before = sequence.load(std::memory_order_acquire);
        if (before & 1) continue;
        copy();
        std::atomic_thread_fence(std::memory_order_acquire);
        if (sequence.load(std::memory_order_relaxed) == before) return before;
    }
}

// Copies what fits of `text` into `to` (`room` bytes); the bytes copied.
inline size_t copy_in(char* to, size_t room, std::string_view text) {
    size_t length = std::min(room, text.size());
    std::memcpy(to, text.data(), length);
    return length;
}

}  // namespace portico::acme
