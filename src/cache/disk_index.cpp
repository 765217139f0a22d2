#include "cache/disk_index.hpp"

#include <signal.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <new>

namespace portico::cache {

namespace {

constexpr size_t bytes_per_slot = 8192;
constexpr size_t fewest_slots = 1024;
constexpr size_t most_slots = 512 * 1024;
constexpr size_t unbounded_slots = 64 * 1024;
// The oldest entries one scan of the table gathers to evict: eviction is a
// scan of every slot, done once per this many objects at most.
constexpr size_t evicted_per_scan = 64;

}  // namespace

size_t DiskIndex::slots_for(uint64_t max_bytes) {
    size_t wanted = max_bytes == 0 ? unbounded_slots : max_bytes / bytes_per_slot;
    return std::bit_ceil(std::clamp(wanted, fewest_slots, most_slots));
}

size_t DiskIndex::bytes_for(size_t slots) {
    return sizeof(DiskIndex) + slots * sizeof(Entry);
}

DiskIndex* DiskIndex::create(void* memory, size_t slots, uint64_t max_bytes) {
    auto* index = new (memory) DiskIndex();
    index->mutex_.init();
    index->slot_count_ = slots;
    index->max_bytes_ = max_bytes;
    for (size_t i = 0; i < slots; ++i) new (&index->slots()[i]) Entry();
    return index;
}

size_t DiskIndex::find_slot(KeyHash key) {
    size_t mask = slot_count_ - 1;
    Entry* all = slots();
    for (size_t slot = key.low & mask;; slot = (slot + 1) & mask)
        if (!all[slot].live || all[slot].key == key) return slot;
}

// Backward-shift deletion (linear probing without tombstones): the entries
// after the hole that probed past it move back into it.
void DiskIndex::erase_slot(size_t slot) {
    size_t mask = slot_count_ - 1;
    Entry* all = slots();
    bytes_.fetch_sub(all[slot].bytes, std::memory_order_relaxed);
    objects_.fetch_sub(1, std::memory_order_relaxed);
    size_t hole = slot;
    for (size_t next = (hole + 1) & mask; all[next].live; next = (next + 1) & mask) {
        size_t home = all[next].key.low & mask;
        // `next` may fill the hole when its home is not in (hole, next].
        bool home_after_hole =
            hole <= next ? (hole < home && home <= next) : (hole < home || home <= next);
        if (home_after_hole) continue;
        all[hole] = all[next];
        hole = next;
    }
    all[hole] = Entry();
}

bool DiskIndex::holds(KeyHash key) {
    core::SharedLock lock(mutex_);
    return slots()[find_slot(key)].live;
}

void DiskIndex::touch(KeyHash key, int64_t now_ms) {
    core::SharedLock lock(mutex_);
    Entry& entry = slots()[find_slot(key)];
    if (entry.live) entry.last_used_ms = now_ms;
}

void DiskIndex::add(const Entry& entry, bool keep_newer, std::vector<KeyHash>& evicted) {
    core::SharedLock lock(mutex_);
    size_t slot = find_slot(entry.key);
    Entry& current = slots()[slot];
    if (current.live) {
        if (keep_newer) return;
        bytes_.fetch_sub(current.bytes, std::memory_order_relaxed);
        objects_.fetch_sub(1, std::memory_order_relaxed);
    }
    current = entry;
    current.live = true;
    bytes_.fetch_add(entry.bytes, std::memory_order_relaxed);
    objects_.fetch_add(1, std::memory_order_relaxed);
    make_room(evicted);
}

void DiskIndex::make_room(std::vector<KeyHash>& evicted) {
    auto over = [&] {
        return (max_bytes_ != 0 && bytes() > max_bytes_) || objects() > slot_count_ / 4 * 3;
    };
    Entry* all = slots();
    std::vector<Entry> oldest;  // a max-heap on last use: the youngest of the oldest on top
    auto younger = [](const Entry& a, const Entry& b) { return a.last_used_ms < b.last_used_ms; };
    while (over()) {
        oldest.clear();
        for (size_t i = 0; i < slot_count_; ++i) {
            if (!all[i].live) continue;
            if (oldest.size() < evicted_per_scan) {
                oldest.push_back(all[i]);
                std::push_heap(oldest.begin(), oldest.end(), younger);
            } else if (all[i].last_used_ms < oldest.front().last_used_ms) {
                std::pop_heap(oldest.begin(), oldest.end(), younger);
                oldest.back() = all[i];
                std::push_heap(oldest.begin(), oldest.end(), younger);
            }
        }
        std::sort_heap(oldest.begin(), oldest.end(), younger);
        for (const Entry& victim : oldest) {
            if (!over()) return;
            erase_slot(find_slot(victim.key));
            evicted.push_back(victim.key);
        }
    }
}

bool DiskIndex::remove(KeyHash key) {
    core::SharedLock lock(mutex_);
    size_t slot = find_slot(key);
    if (!slots()[slot].live) return false;
    erase_slot(slot);
    return true;
}

std::vector<KeyHash> DiskIndex::select(const std::function<bool(const Entry&)>& matches) {
    core::SharedLock lock(mutex_);
    std::vector<KeyHash> chosen;
    for (size_t i = 0; i < slot_count_; ++i)
        if (slots()[i].live && matches(slots()[i])) chosen.push_back(slots()[i].key);
    return chosen;
}

bool DiskIndex::claim_loading(pid_t self) {
    pid_t current = loader_.load(std::memory_order_acquire);
    for (;;) {
        if (current == done) return false;
        // A loader that died (a worker killed mid-scan) leaves it to the next.
        if (current != 0 && (kill(current, 0) == 0 || errno != ESRCH)) return false;
        if (loader_.compare_exchange_weak(current, self, std::memory_order_acq_rel)) return true;
    }
}

}  // namespace portico::cache
