#include "compress/compressed_cache.hpp"

#include <functional>

namespace portico::compress {

size_t CompressedCache::KeyHash::operator()(const Key& key) const {
    size_t hash = std::hash<const void*>{}(key.source);
    auto mix = [&hash](uint64_t value) { hash = hash * 0x9e3779b97f4a7c15ULL ^ std::hash<uint64_t>{}(value); };
    mix(key.position);
    mix(key.size);
    mix(static_cast<uint64_t>(key.coding) << 32 | static_cast<uint32_t>(key.level));
    return hash;
}

std::shared_ptr<const std::string> CompressedCache::find(const Key& key) {
    auto found = index_.find(key);
    if (found == index_.end()) return nullptr;
    Recent::iterator entry = found->second;
    if (entry->source.expired()) {
        erase(entry);
        return nullptr;
    }
    recent_.splice(recent_.begin(), recent_, entry);
    return entry->bytes;
}

void CompressedCache::insert(const Key& key, const std::shared_ptr<const void>& source,
                             std::shared_ptr<const std::string> bytes) {
    size_t size = bytes->size();
    if (size > max_bytes_ / 8) return;
    if (auto found = index_.find(key); found != index_.end()) erase(found->second);
    // Only on an insert, which follows a compression that cost far more.
    drop_expired();
    while (bytes_ + size > max_bytes_ && !recent_.empty()) erase(std::prev(recent_.end()));
    recent_.push_front(Entry{key, source, std::move(bytes)});
    index_.emplace(key, recent_.begin());
    bytes_ += size;
}

void CompressedCache::erase(Recent::iterator entry) {
    bytes_ -= entry->bytes->size();
    index_.erase(entry->key);
    recent_.erase(entry);
}

void CompressedCache::drop_expired() {
    for (auto entry = recent_.begin(); entry != recent_.end();) {
        auto next = std::next(entry);
        if (entry->source.expired()) erase(entry);
        entry = next;
    }
}

}  // namespace portico::compress
