#include "core/shared_memory.hpp"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace portico::core {

std::unique_ptr<SharedMemory> SharedMemory::map(size_t bytes, std::string& error) {
    void* data = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (data == MAP_FAILED) {
        error = std::string("mmap of ") + std::to_string(bytes) + " bytes: " + std::strerror(errno);
        return nullptr;
    }
    return std::unique_ptr<SharedMemory>(new SharedMemory(data, bytes));
}

SharedMemory::~SharedMemory() {
    munmap(data_, size_);
}

namespace {

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

}  // namespace

pid_t SharedMutex::read_pid() {
    static bool registered = pthread_atfork(nullptr, nullptr, [] { cached_pid_ = 0; }) == 0;
    (void)registered;
    return cached_pid_ = getpid();
}

void SharedMutex::lock_contended() {
    pid_t me = self();
    for (unsigned round = 0;; ++round) {
        pid_t owner = owner_.load(std::memory_order_relaxed);
        if (owner == 0) {
            if (owner_.compare_exchange_weak(owner, me, std::memory_order_acquire)) return;
            continue;
        }
        // The owner died holding it (kill(2) finds no such process): ours.
        if (round % 64 == 63 && kill(owner, 0) != 0 && errno == ESRCH) {
            if (owner_.compare_exchange_strong(owner, me, std::memory_order_acquire)) return;
            continue;
        }
        if (round < 32) {
            for (int i = 0; i < 64; ++i) cpu_relax();
        } else {
            sched_yield();
        }
    }
}

}  // namespace portico::core
