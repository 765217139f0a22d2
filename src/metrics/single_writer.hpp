// How a worker bumps the counters in its own slot of the shared region.
//
// Every slot has exactly one writing process, so a relaxed load followed by a
// relaxed store cannot lose an update: on x86-64 that is two plain moves, no
// lock prefix, no fence, no system call. Readers in other processes still
// see whole 64-bit values (never torn ones) because the members are atomics,
// and lock-free atomics are address-free, which is what makes them safe in
// memory that several processes map.
#pragma once

#include <atomic>
#include <cstdint>

namespace portico::metrics {

static_assert(std::atomic<uint64_t>::is_always_lock_free &&
                  std::atomic<int64_t>::is_always_lock_free,
              "counters shared between processes need lock-free atomics");

template <typename T>
inline void bump(std::atomic<T>& counter, T amount) {
    counter.store(counter.load(std::memory_order_relaxed) + amount, std::memory_order_relaxed);
}

inline void raise_to(std::atomic<uint64_t>& maximum, uint64_t value) {
    if (value > maximum.load(std::memory_order_relaxed))
        maximum.store(value, std::memory_order_relaxed);
}

}  // namespace portico::metrics
