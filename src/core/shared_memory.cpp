#include "core/shared_memory.hpp"

#include <sys/mman.h>

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

void SharedMutex::init() {
    pthread_mutexattr_t attributes;
    pthread_mutexattr_init(&attributes);
    pthread_mutexattr_setpshared(&attributes, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&attributes, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&mutex_, &attributes);
    pthread_mutexattr_destroy(&attributes);
}

void SharedMutex::lock() {
    if (pthread_mutex_lock(&mutex_) == EOWNERDEAD) pthread_mutex_consistent(&mutex_);
}

}  // namespace portico::core
