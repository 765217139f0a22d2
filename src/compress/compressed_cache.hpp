// Bodies compressed whole, kept per worker so a hot static file is
// compressed once per (file, coding, level) instead of on every request
// (nginx recompresses every time; its gzip_static needs files made ahead).
//
// Freshness is the file cache's: an entry is keyed by its body's owner (the
// file cache's OpenFile) and holds it weakly. A file changed on disk is
// dropped by the file cache (DirectoryWatch), the next request opens a new
// OpenFile, and the old entry can no longer be found: it expires with the
// last response that used the old file. The weak reference also keeps the
// old owner's address from being reused while the entry exists, so a key
// can never name the wrong bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>

#include "config/coding.hpp"

namespace portico::compress {

class CompressedCache {
public:
    struct Key {
        const void* source;  // the body's owner: the same owner always stands for the same bytes
        uint64_t position;   // where the body lies in it (a file offset, or the bytes' address)
        uint64_t size;
        config::Coding coding;
        int level;
        bool operator==(const Key&) const = default;
    };

    // `max_bytes` of compressed bodies; the least recently used go first.
    explicit CompressedCache(size_t max_bytes) : max_bytes_(max_bytes) {}

    // The compressed body, or nullptr (never compressed, evicted, or its
    // source is gone).
    std::shared_ptr<const std::string> find(const Key& key);
    // Keeps `bytes` for `key` while `source` lives, unless they would take
    // more than an eighth of the budget (one big file must not empty it).
    void insert(const Key& key, const std::shared_ptr<const void>& source,
                std::shared_ptr<const std::string> bytes);

    size_t entries() const { return index_.size(); }
    size_t bytes() const { return bytes_; }

private:
    struct Entry {
        Key key;
        std::weak_ptr<const void> source;
        std::shared_ptr<const std::string> bytes;
    };
    struct KeyHash {
        size_t operator()(const Key& key) const;
    };
    using Recent = std::list<Entry>;

    void erase(Recent::iterator entry);
    void drop_expired();

    size_t max_bytes_;
    size_t bytes_ = 0;
    Recent recent_;  // most recently used first
    std::unordered_map<Key, Recent::iterator, KeyHash> index_;
};

}  // namespace portico::compress
