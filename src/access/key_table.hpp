// A table of keys in shared memory (core/shared_memory.hpp), for the limits
// that hold across workers: a fixed number of entries, found by a 64-bit
// hash of the key, kept in least-recently-seen order so that a full table
// gives up its oldest key rather than refuse a new one (nginx's limit_req
// zone does the same). Each entry carries two numbers its user defines.
//
// Keys are hashed with a seed the master draws at random, so a client
// cannot pick keys that share an entry with another client's. Two keys
// with the same 64-bit hash would share one (about one pair in 2^64).
//
// The caller holds the table's lock around every call (TableLock).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/shared_memory.hpp"

namespace portico::access {

struct KeyEntry {
    uint64_t key = 0;  // the key's hash
    uint32_t bucket_next = 0;
    uint32_t newer = 0;  // least-recently-seen order
    uint32_t older = 0;
    uint32_t unused = 0;
    uint64_t first = 0;  // the user's
    uint64_t second = 0;
};

class KeyTable {
public:
    static size_t bytes_for(size_t entries);
    // The entries a region of `bytes` holds (at least 16: a smaller region
    // is made bytes_for(16) long by the caller).
    static size_t entries_in(size_t bytes);

    // Master: lays an empty table out in `memory` (`bytes` long, zeroed).
    static KeyTable* create(void* memory, size_t bytes, uint64_t seed);

    uint64_t hash(std::string_view key) const;
    // A key of at most 64 bits (an IPv4 address with its family): mixed
    // with the seed by a bijection, so two such keys never share an entry.
    uint64_t hash(uint64_t key) const {
        // Every step is invertible: the seed, an odd multiplier (splitmix64's),
        // then the product's high half, where every bit of the key counts,
        // folded into the low bits the buckets are chosen by.
        uint64_t x = (key ^ seed_) * 0xbf58476d1ce4e5b9ull;
        return x ^ (x >> 32);
    }
    core::SharedMutex& mutex() { return mutex_; }

    // The entry of `key`, made the most recently seen; nullptr when absent.
    // Inline, as find_or_add: a limited location's every request takes them.
    KeyEntry* find(uint64_t key) {
        KeyEntry* all = entries();
        for (uint32_t i = buckets()[key & (bucket_count_ - 1)]; i != none; i = all[i].bucket_next) {
            if (all[i].key != key) continue;
            if (newest_ != i) make_newest(i);
            return &all[i];
        }
        return nullptr;
    }
    // The same, adding it when absent (`added`; its numbers zero). A full
    // table evicts its least recently seen entry when `evict`, else
    // answers nullptr.
    KeyEntry* find_or_add(uint64_t key, bool evict, bool& added) {
        added = false;
        if (KeyEntry* found = find(key)) [[likely]]
            return found;
        return add(key, evict, added);
    }
    void remove(KeyEntry& entry);
    size_t size() const { return used_; }
    size_t capacity() const { return capacity_; }

private:
    static constexpr uint32_t none = UINT32_MAX;
    uint32_t* buckets() { return reinterpret_cast<uint32_t*>(this + 1); }
    KeyEntry* entries() { return reinterpret_cast<KeyEntry*>(buckets() + bucket_count_); }
    uint32_t index_of(const KeyEntry& entry) { return static_cast<uint32_t>(&entry - entries()); }
    KeyEntry* add(uint64_t key, bool evict, bool& added);
    void make_newest(uint32_t index);
    void unlink_from_order(uint32_t index);
    void push_newest(uint32_t index);
    void unlink_from_bucket(uint32_t index);

    core::SharedMutex mutex_;
    uint64_t seed_ = 0;
    uint32_t capacity_ = 0;
    uint32_t bucket_count_ = 0;  // a power of two
    uint32_t used_ = 0;
    uint32_t newest_ = none;
    uint32_t oldest_ = none;
    uint32_t free_ = none;  // entries never used or removed, through bucket_next
};

class TableLock : public core::SharedLock {
public:
    explicit TableLock(KeyTable& table) : core::SharedLock(table.mutex()) {}
};

}  // namespace portico::access
