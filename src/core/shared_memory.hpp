// Memory the master and every worker share: mapped by the master before it
// forks (MAP_SHARED | MAP_ANONYMOUS), so each worker inherits it at the
// same address and a reload's new workers find what the old ones wrote.
// Limits keep their keys here (access/), as the counters do theirs
// (metrics/shared_counters.hpp).
#pragma once

#include <pthread.h>

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

// A mutex between processes, placed in shared memory. Robust: a worker
// killed while it holds the lock (a crash, SIGKILL) does not lock the
// others out; the next one takes it over and goes on with what it guarded
// (for a limit, a count that may be off by that one request).
class SharedMutex {
public:
    void init();  // once, by the master, before any worker uses it
    void lock();
    void unlock() { pthread_mutex_unlock(&mutex_); }

private:
    pthread_mutex_t mutex_;
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
