// One cache zone's objects in shared memory ([cache.NAME] memory): laid
// out by the master before it forks (core/shared_memory.hpp), so every
// worker stores into and answers from the same objects, and a reload's
// new workers find them.
//
// The region: this header, the index's buckets, the entries, then the
// data blocks with their chain links. An object's bytes (its key text,
// its stored head, its body) sit in a chain of fixed-size blocks taken
// from a free list; entries are in least-recently-used order, and a store
// that needs room evicts from the old end until the object fits, so the
// zone never holds more than its memory. Entries are found by a 128-bit
// hash of the key (and of the Vary variant's request fields).
//
// Readers copy an object out under the lock (cache/cached_object.hpp keeps
// the copy per worker while it is sent and for the next hits), so an
// eviction never frees bytes still being sent: no pin outlives a call. An
// object is written whole, at the end of its response (the stream keeps
// it in the worker meanwhile): nothing half-filled is ever visible.
//
// The fill locks (`lock = true`): a few slots saying "a request for this
// key is on its way upstream", each with a deadline so that a worker that
// dies while filling frees its keys by itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "core/shared_memory.hpp"

namespace portico::cache {

struct KeyHash {
    uint64_t low = 0;
    uint64_t high = 0;
    bool operator==(const KeyHash&) const = default;
};

KeyHash hash_key(std::string_view key);

// What an object says about itself besides its bytes (times in seconds
// since the epoch, lifetimes in seconds).
struct ObjectFacts {
    uint16_t status = 0;
    bool revalidate_always = false;
    bool vary_marker = false;  // the "head" is the Vary field names, '\n'-separated
    int64_t stored_at = 0;
    int64_t lifetime = 0;
    int64_t initial_age = 0;
    int64_t stale_while_revalidate = 0;
    int64_t stale_if_error = 0;
    // A coded variant (cache/variant_stream.hpp): the identity object it
    // was compressed from (its entry and generation), 0/0 for the others.
    uint32_t coded_from_entry = 0;
    uint32_t coded_from_generation = 0;
    uint32_t key_bytes = 0;
    uint32_t head_bytes = 0;
    uint64_t body_bytes = 0;
};

// An object as read: its facts and its bytes (key text, head, body),
// copied out, and where it was (for the worker's copies).
struct ReadObject {
    ObjectFacts facts;
    uint32_t entry = 0;
    uint32_t generation = 0;
};

class Store {
public:
    static constexpr size_t block_bytes = 4096;

    // Master: lays an empty store out in `memory` (`bytes` long, zeroed).
    // At least minimum_bytes.
    static constexpr size_t minimum_bytes = 64 * 1024;
    static Store* create(void* memory, size_t bytes);

    core::SharedMutex& mutex() { return mutex_; }

    // The rest are called with mutex() held.

    // The object of `key`, made the most recently used; copies its bytes
    // to `bytes` (key text, head, body) unless `copy` is false (the caller
    // has them: the same entry and generation). False when absent.
    bool find(KeyHash key, ReadObject& found, std::string* bytes);
    // Stores an object under `key`, replacing one there. `parts` are its
    // bytes in order (their total: key, head and body bytes of `facts`).
    // False when it cannot fit even with everything else evicted.
    bool insert(KeyHash key, const ObjectFacts& facts, std::span<const std::string_view> parts);
    // Removes the object of `key`, if any.
    void erase(KeyHash key);
    // Removes the objects whose key text `matches`; their count.
    size_t remove_if(const std::function<bool(std::string_view key)>& matches);

    // The largest object that may be stored (a quarter of the blocks: one
    // object never empties the zone).
    uint64_t max_object_bytes() const { return uint64_t{block_count_} * block_bytes / 4; }
    uint64_t objects() const { return objects_; }
    uint64_t bytes_held() const { return uint64_t{blocks_used_} * block_bytes; }
    uint64_t capacity_bytes() const { return uint64_t{block_count_} * block_bytes; }

    // The fill lock of `key`: true when this caller now holds it (until
    // unlock or `now_ms + hold_ms`), false when another does.
    bool try_lock(KeyHash key, uint64_t now_ms, uint64_t hold_ms);
    bool locked(KeyHash key, uint64_t now_ms) const;
    void unlock(KeyHash key);

private:
    static constexpr uint32_t none = UINT32_MAX;
    static constexpr size_t lock_slots = 1024;
    struct Entry;
    struct FillLock {
        KeyHash key;
        uint64_t until_ms = 0;  // 0: free
    };

    uint32_t* buckets();
    Entry* entries();
    uint32_t* block_links();
    char* block(uint32_t index);
    Entry* lookup(KeyHash key);
    void unlink(uint32_t index);  // out of its bucket and the order, blocks freed
    void push_newest(uint32_t index);
    void unlink_from_order(uint32_t index);
    void copy_out(const Entry& entry, std::string& out);
    bool make_room(uint32_t blocks);

    core::SharedMutex mutex_;
    uint32_t entry_count_ = 0;
    uint32_t bucket_count_ = 0;  // a power of two
    uint32_t block_count_ = 0;
    uint32_t blocks_used_ = 0;
    uint32_t objects_ = 0;
    uint32_t newest_ = none;
    uint32_t oldest_ = none;
    uint32_t free_entries_ = none;  // through bucket_next
    uint32_t free_blocks_ = none;   // through block_links
    size_t blocks_offset_ = 0;      // from `this`
    FillLock locks_[lock_slots];
};

}  // namespace portico::cache
