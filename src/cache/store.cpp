#include "cache/store.hpp"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <new>

namespace portico::cache {

struct Store::Entry {
    KeyHash key;
    uint32_t bucket_next = none;  // also the free list's link
    uint32_t newer = none;        // least-recently-used order
    uint32_t older = none;
    uint32_t first_block = none;
    uint32_t block_count = 0;
    uint32_t generation = 0;  // a new one each time the entry holds a new object
    bool live = false;
    ObjectFacts facts;
};

KeyHash hash_key(std::string_view key) {
    XXH128_hash_t hash = XXH3_128bits(key.data(), key.size());
    return {hash.low64, hash.high64};
}

namespace {

constexpr size_t align_up(size_t value, size_t alignment) {
    return (value + alignment - 1) / alignment * alignment;
}

}  // namespace

Store* Store::create(void* memory, size_t bytes) {
    // Each object needs an entry, a block, its link and (at most) two
    // bucket words; a zone holds as many entries as blocks.
    constexpr size_t per_object = sizeof(Entry) + block_bytes + sizeof(uint32_t) * 3;
    size_t count = (bytes - sizeof(Store) - 2 * block_bytes) / per_object;
    count = std::max<size_t>(count, 8);
    auto* store = new (memory) Store();
    store->mutex_.init();
    store->entry_count_ = static_cast<uint32_t>(count);
    store->block_count_ = static_cast<uint32_t>(count);
    store->bucket_count_ = std::bit_ceil(static_cast<uint32_t>(count));
    std::fill_n(store->buckets(), store->bucket_count_, none);
    Entry* entries = store->entries();
    for (uint32_t i = 0; i < count; ++i) {
        new (&entries[i]) Entry();
        entries[i].bucket_next = i + 1 < count ? i + 1 : none;
    }
    store->free_entries_ = 0;
    uint32_t* links = store->block_links();
    for (uint32_t i = 0; i < count; ++i) links[i] = i + 1 < count ? i + 1 : none;
    store->free_blocks_ = 0;
    store->blocks_offset_ =
        align_up(reinterpret_cast<char*>(links + count) - reinterpret_cast<char*>(store), 64);
    return store;
}

uint32_t* Store::buckets() {
    return reinterpret_cast<uint32_t*>(this + 1);
}
Store::Entry* Store::entries() {
    return reinterpret_cast<Entry*>(
        align_up(reinterpret_cast<uintptr_t>(buckets() + bucket_count_), alignof(Entry)));
}
uint32_t* Store::block_links() {
    return reinterpret_cast<uint32_t*>(entries() + entry_count_);
}
char* Store::block(uint32_t index) {
    return reinterpret_cast<char*>(this) + blocks_offset_ + size_t{index} * block_bytes;
}

Store::Entry* Store::lookup(KeyHash key) {
    Entry* all = entries();
    for (uint32_t i = buckets()[key.low & (bucket_count_ - 1)]; i != none; i = all[i].bucket_next)
        if (all[i].key == key) return &all[i];
    return nullptr;
}

void Store::unlink_from_order(uint32_t index) {
    Entry* all = entries();
    Entry& entry = all[index];
    if (entry.newer != none)
        all[entry.newer].older = entry.older;
    else
        newest_ = entry.older;
    if (entry.older != none)
        all[entry.older].newer = entry.newer;
    else
        oldest_ = entry.newer;
    entry.newer = entry.older = none;
}

void Store::push_newest(uint32_t index) {
    Entry* all = entries();
    all[index].older = newest_;
    all[index].newer = none;
    if (newest_ != none) all[newest_].newer = index;
    newest_ = index;
    if (oldest_ == none) oldest_ = index;
}

void Store::unlink(uint32_t index) {
    Entry* all = entries();
    Entry& entry = all[index];
    uint32_t* link = &buckets()[entry.key.low & (bucket_count_ - 1)];
    while (*link != index) link = &all[*link].bucket_next;
    *link = entry.bucket_next;
    unlink_from_order(index);
    // The blocks go back as one chain: its last link joins the free list.
    uint32_t* links = block_links();
    uint32_t last = entry.first_block;
    while (links[last] != none) last = links[last];
    links[last] = free_blocks_;
    free_blocks_ = entry.first_block;
    blocks_used_ -= entry.block_count;
    --objects_;
    entry.live = false;
    entry.first_block = none;
    entry.block_count = 0;
    entry.bucket_next = free_entries_;
    free_entries_ = index;
}

void Store::copy_out(const Entry& entry, std::string& out) {
    uint64_t left =
        uint64_t{entry.facts.key_bytes} + entry.facts.head_bytes + entry.facts.body_bytes;
    out.resize(left);
    char* to = out.data();
    uint32_t* links = block_links();
    for (uint32_t b = entry.first_block; left > 0; b = links[b]) {
        size_t n = std::min<uint64_t>(left, block_bytes);
        std::memcpy(to, block(b), n);
        to += n;
        left -= n;
    }
}

bool Store::find(KeyHash key, ReadObject& found, std::string* bytes) {
    Entry* entry = lookup(key);
    if (entry == nullptr) return false;
    uint32_t index = static_cast<uint32_t>(entry - entries());
    unlink_from_order(index);
    push_newest(index);
    found.facts = entry->facts;
    found.entry = index;
    found.generation = entry->generation;
    if (bytes != nullptr) copy_out(*entry, *bytes);
    return true;
}

bool Store::make_room(uint32_t blocks) {
    while (block_count_ - blocks_used_ < blocks || free_entries_ == none) {
        if (oldest_ == none) return false;
        unlink(oldest_);
    }
    return true;
}

bool Store::insert(KeyHash key, const ObjectFacts& facts, std::span<const std::string_view> parts) {
    uint64_t total = 0;
    for (std::string_view part : parts) total += part.size();
    if (total == 0 || total > max_object_bytes()) return false;
    auto needed = static_cast<uint32_t>((total + block_bytes - 1) / block_bytes);
    if (Entry* old = lookup(key)) unlink(static_cast<uint32_t>(old - entries()));
    if (!make_room(needed)) return false;
    uint32_t index = free_entries_;
    Entry& entry = entries()[index];
    free_entries_ = entry.bucket_next;
    // The blocks: the first `needed` of the free list, cut off it.
    uint32_t* links = block_links();
    entry.first_block = free_blocks_;
    uint32_t last = free_blocks_;
    for (uint32_t i = 1; i < needed; ++i) last = links[last];
    free_blocks_ = links[last];
    links[last] = none;
    uint32_t current = entry.first_block;
    size_t used = 0;  // of the current block
    for (std::string_view part : parts) {
        while (!part.empty()) {
            if (used == block_bytes) {
                current = links[current];
                used = 0;
            }
            size_t n = std::min(part.size(), block_bytes - used);
            std::memcpy(block(current) + used, part.data(), n);
            used += n;
            part.remove_prefix(n);
        }
    }
    entry.key = key;
    entry.facts = facts;
    entry.block_count = needed;
    ++entry.generation;
    entry.live = true;
    uint32_t& bucket = buckets()[key.low & (bucket_count_ - 1)];
    entry.bucket_next = bucket;
    bucket = index;
    push_newest(index);
    blocks_used_ += needed;
    ++objects_;
    return true;
}

void Store::erase(KeyHash key) {
    if (Entry* entry = lookup(key)) unlink(static_cast<uint32_t>(entry - entries()));
}

size_t Store::remove_if(const std::function<bool(std::string_view key)>& matches) {
    size_t removed = 0;
    Entry* all = entries();
    std::string key;
    for (uint32_t i = 0; i < entry_count_; ++i) {
        if (!all[i].live) continue;
        // The key text is at the start of the first block, or spans blocks.
        size_t length = all[i].facts.key_bytes;
        if (length <= block_bytes) {
            key.assign(block(all[i].first_block), length);
        } else {
            copy_out(all[i], key);
            key.resize(length);
        }
        if (!matches(key)) continue;
        unlink(i);
        ++removed;
    }
    return removed;
}

namespace {
constexpr size_t lock_probes = 8;
}

bool Store::try_lock(KeyHash key, uint64_t now_ms, uint64_t hold_ms) {
    FillLock* free = nullptr;
    for (size_t probe = 0; probe < lock_probes; ++probe) {
        FillLock& slot = locks_[(key.low + probe) % lock_slots];
        bool held = slot.until_ms > now_ms;
        if (held && slot.key == key) return false;
        if (!held && free == nullptr) free = &slot;
    }
    // Every slot near it busy: the request goes on without a lock (more
    // than one may then go upstream, as without `lock`).
    if (free != nullptr) {
        free->key = key;
        free->until_ms = now_ms + hold_ms;
    }
    return true;
}

bool Store::locked(KeyHash key, uint64_t now_ms) const {
    for (size_t probe = 0; probe < lock_probes; ++probe) {
        const FillLock& slot = locks_[(key.low + probe) % lock_slots];
        if (slot.key == key && slot.until_ms > now_ms) return true;
    }
    return false;
}

void Store::unlock(KeyHash key) {
    for (size_t probe = 0; probe < lock_probes; ++probe) {
        FillLock& slot = locks_[(key.low + probe) % lock_slots];
        if (slot.key == key) slot.until_ms = 0;
    }
}

}  // namespace portico::cache
