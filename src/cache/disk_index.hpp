// What a zone's disk tier holds ([cache.NAME] path), in shared memory made
// by the master before it forks: every worker knows which objects are on
// disk without a stat per memory miss, and a reload's workers keep it. An
// open-addressing table of (key hash, the base key's hash, bytes, last
// use), with the bytes they add up to, bounded by max_size: an add that
// goes over it gives back the least recently used objects, whose files
// the caller deletes.
//
// The startup loader (cache/disk_loader.hpp) fills it from the folder; the
// `loaded` word says whether that was done for this index, and which
// worker is doing it.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "cache/store.hpp"
#include "core/shared_memory.hpp"

namespace portico::cache {

class DiskIndex {
public:
    // The slots for a tier of `max_bytes` (0: unbounded): one per 8 KiB of
    // it, within [1024, 512 Ki]; three quarters of them may be used.
    static size_t slots_for(uint64_t max_bytes);
    static size_t bytes_for(size_t slots);
    // Master: lays an empty index out in `memory` (bytes_for(slots), zeroed).
    static DiskIndex* create(void* memory, size_t slots, uint64_t max_bytes);

    struct Entry {
        KeyHash key;
        KeyHash base;  // hash_key of the key text (a Vary variant's differs from `key`)
        uint64_t bytes = 0;
        int64_t last_used_ms = 0;  // wall clock: the loader takes a file's mtime
        bool live = false;
    };

    // Each takes the lock itself.
    bool holds(KeyHash key);
    void touch(KeyHash key, int64_t now_ms);
    // Adds (or replaces) an object; `evicted` gets those that make room
    // (their files are to be deleted). `keep_newer`: the loader's add,
    // which leaves an entry a worker wrote meanwhile.
    void add(const Entry& entry, bool keep_newer, std::vector<KeyHash>& evicted);
    bool remove(KeyHash key);
    // The keys of the entries `matches` selects (purge removes them one by one).
    std::vector<KeyHash> select(const std::function<bool(const Entry&)>& matches);

    uint64_t bytes() const { return bytes_.load(std::memory_order_relaxed); }
    uint64_t objects() const { return objects_.load(std::memory_order_relaxed); }

    // The loader: true when this process is to scan the folder (nobody has,
    // and no live process is doing it); finish_loading once done.
    bool claim_loading(pid_t self);
    void finish_loading() { loader_.store(done, std::memory_order_release); }
    bool loaded() const { return loader_.load(std::memory_order_acquire) == done; }

private:
    static constexpr pid_t done = -1;
    Entry* slots() { return reinterpret_cast<Entry*>(this + 1); }
    size_t find_slot(KeyHash key);  // its slot, or the empty one where it would go
    void erase_slot(size_t slot);
    // Evicts the least recently used until within the bounds.
    void make_room(std::vector<KeyHash>& evicted);

    core::SharedMutex mutex_;
    size_t slot_count_ = 0;  // a power of two
    uint64_t max_bytes_ = 0;
    std::atomic<uint64_t> bytes_{0};
    std::atomic<uint64_t> objects_{0};
    std::atomic<pid_t> loader_{0};  // 0: not started; a pid: scanning; done
};

}  // namespace portico::cache
