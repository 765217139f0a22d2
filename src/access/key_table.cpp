#include "access/key_table.hpp"

#include <bit>
#include <new>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace portico::access {

namespace {

// One bucket per entry, rounded up to a power of two: short chains.
size_t buckets_for(size_t entries) {
    return std::bit_ceil(entries);
}

}  // namespace

size_t KeyTable::bytes_for(size_t entries) {
    return sizeof(KeyTable) + buckets_for(entries) * sizeof(uint32_t) + entries * sizeof(KeyEntry);
}

size_t KeyTable::entries_in(size_t bytes) {
    // Each entry costs itself and at most two buckets.
    size_t entries = (bytes - sizeof(KeyTable)) / (sizeof(KeyEntry) + 2 * sizeof(uint32_t));
    return entries < 16 ? 16 : entries > UINT32_MAX / 2 ? UINT32_MAX / 2 : entries;
}

KeyTable* KeyTable::create(void* memory, size_t bytes, uint64_t seed) {
    auto* table = new (memory) KeyTable();
    table->mutex_.init();
    table->seed_ = seed;
    // entries_in counts two buckets an entry, the most bit_ceil adds.
    size_t entries = entries_in(bytes);
    table->capacity_ = static_cast<uint32_t>(entries);
    table->bucket_count_ = static_cast<uint32_t>(buckets_for(entries));
    uint32_t* buckets = table->buckets();
    for (uint32_t i = 0; i < table->bucket_count_; ++i) buckets[i] = none;
    KeyEntry* all = table->entries();
    for (uint32_t i = 0; i < table->capacity_; ++i)
        all[i].bucket_next = i + 1 < table->capacity_ ? i + 1 : none;
    table->free_ = 0;
    return table;
}

uint64_t KeyTable::hash(std::string_view key) const {
    return XXH3_64bits_withSeed(key.data(), key.size(), seed_);
}

void KeyTable::make_newest(uint32_t index) {
    unlink_from_order(index);
    push_newest(index);
}

KeyEntry* KeyTable::add(uint64_t key, bool evict, bool& added) {
    KeyEntry* all = entries();
    uint32_t index = free_;
    if (index != none) {
        free_ = all[index].bucket_next;
    } else {
        if (!evict || oldest_ == none) return nullptr;
        index = oldest_;
        unlink_from_order(index);
        unlink_from_bucket(index);
        --used_;
    }
    KeyEntry& entry = all[index];
    entry = KeyEntry{};
    entry.key = key;
    uint32_t& bucket = buckets()[key & (bucket_count_ - 1)];
    entry.bucket_next = bucket;
    bucket = index;
    push_newest(index);
    ++used_;
    added = true;
    return &entry;
}

void KeyTable::remove(KeyEntry& entry) {
    uint32_t index = index_of(entry);
    unlink_from_order(index);
    unlink_from_bucket(index);
    entry.bucket_next = free_;
    free_ = index;
    --used_;
}

void KeyTable::unlink_from_order(uint32_t index) {
    KeyEntry* all = entries();
    KeyEntry& entry = all[index];
    if (entry.newer != none) all[entry.newer].older = entry.older;
    else newest_ = entry.older;
    if (entry.older != none) all[entry.older].newer = entry.newer;
    else oldest_ = entry.newer;
}

void KeyTable::push_newest(uint32_t index) {
    KeyEntry* all = entries();
    all[index].newer = none;
    all[index].older = newest_;
    if (newest_ != none) all[newest_].newer = index;
    newest_ = index;
    if (oldest_ == none) oldest_ = index;
}

void KeyTable::unlink_from_bucket(uint32_t index) {
    KeyEntry* all = entries();
    uint32_t* link = &buckets()[all[index].key & (bucket_count_ - 1)];
    while (*link != index) link = &all[*link].bucket_next;
    *link = all[index].bucket_next;
}

}  // namespace portico::access
