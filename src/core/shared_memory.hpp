// Memory the master and every worker share: mapped by the master before it
// forks (MAP_SHARED | MAP_ANONYMOUS), so each worker inherits it at the
// same address and a reload's new workers find what the old ones wrote.
// Limits keep their keys here (access/), as the counters do theirs
// (metrics/shared_counters.hpp).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>

namespace portico::core {

class SharedMemory {
public:
    // Zero-filled; nullptr and `error` when mmap fails.
    static std::unique_ptr<SharedMemory> map(size_t bytes, std::string& error);
    ~SharedMemory();
    SharedMemory(const SharedMemory&) = delete;
    SharedMemory& operator=(const SharedMemory&) = delete;

    void* data() const { return data_; }
    size_t size() const { return size_; }

private:
    SharedMemory(void* data, size_t size) : data_(data), size_(size) {}
    void* data_;
    size_t size_;
};

// A lock between processes, placed in shared memory, held for a few dozen
// instructions at a time (a limit's key looked up and counted). A word
// holding the owner's pid, as nginx's ngx_shmtx: taking it free is one
// compare-and-swap, where a robust pthread mutex cost ten times that per
// request. A waiter spins, then yields; a worker killed while it holds the
// lock (a crash, SIGKILL) does not lock the others out: a waiter that finds
// the owner gone takes the lock over and goes on with what it guarded (for
// a limit, a count that may be off by that one request).
class SharedMutex {
public:
    void init() { owner_.store(0, std::memory_order_relaxed); }  // once, by the master
    void lock() {
        pid_t free = 0;
        if (!owner_.compare_exchange_strong(free, self(), std::memory_order_acquire)) [[unlikely]]
            lock_contended();
    }
    void unlock() { owner_.store(0, std::memory_order_release); }

private:
    // This process's pid, read once (getpid() is a system call on glibc
    // 2.25+) and forgotten in a forked child, which reads its own.
    static pid_t self() { return cached_pid_ != 0 ? cached_pid_ : read_pid(); }
    static pid_t read_pid();
    void lock_contended();
    static inline pid_t cached_pid_ = 0;
    std::atomic<pid_t> owner_{0};
};

class SharedLock {
public:
    explicit SharedLock(SharedMutex& mutex) : mutex_(mutex) { mutex_.lock(); }
    ~SharedLock() { mutex_.unlock(); }
    SharedLock(const SharedLock&) = delete;
    SharedLock& operator=(const SharedLock&) = delete;

private:
    SharedMutex& mutex_;
};

}  // namespace portico::core
