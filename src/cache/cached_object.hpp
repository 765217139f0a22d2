// An object of the shared store as a worker answers from it: its bytes
// copied out of the zone once (cache/store.hpp), its head fields found,
// kept alive by the responses still sending it, and remembered by the
// worker for the next hits on the same stored object (WorkerCopies), so a
// hot object costs one lookup under the lock, not a copy, per hit.
#pragma once

#include <cstdint>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cache/store.hpp"
#include "core/unique_fd.hpp"
#include "http/header_list.hpp"

namespace portico::cache {

struct CachedObject {
    ReadObject where;
    std::string bytes;                                                  // key text, head, body
    std::vector<std::pair<std::string_view, std::string_view>> fields;  // into bytes
    std::string_view etag;
    // Last-Modified, read once when the object is copied (a date's parse
    // costs more than the rest of a hit).
    std::optional<time_t> last_modified;
    // A body over body_file_min_bytes also in a memfd, written once when the
    // object is copied: a hit sends it with sendfile(2), as a static file of
    // that size is sent, and the kernel takes its pages by reference instead
    // of copying every byte into the socket (on a 100 KiB hit, half the
    // worker's CPU: tests/bench/results/cache-side-by-side.md). Not open when
    // the memfd could not be made: the hit then sends body() from memory.
    core::UniqueFd body_file;
    static constexpr uint64_t body_file_min_bytes = 16 * 1024;  // static's max_cached_bytes

    const ObjectFacts& facts() const { return where.facts; }
    std::string_view key() const { return std::string_view(bytes).substr(0, facts().key_bytes); }
    std::string_view head() const {
        return std::string_view(bytes).substr(facts().key_bytes, facts().head_bytes);
    }
    std::string_view body() const {
        return std::string_view(bytes).substr(facts().key_bytes + facts().head_bytes);
    }
    // A Vary marker's field names.
    std::vector<std::string_view> vary_names() const;
};

// The head fields of a response as stored: "name\nvalue\n" for each field
// worth keeping (not the hop-by-hop ones, not those the connection or the
// hit writes itself: Date, Content-Length, Age), nor `also_unstored` (the
// location's status header, on a response made from a hit).
std::string serialize_head(const http::HeaderList& fields, std::string_view also_unstored = {});

// The object read from `store` (its lock held) under `key`, from the
// worker's copies when it has this one; nullptr when absent.
class WorkerCopies {
public:
    explicit WorkerCopies(uint64_t budget_bytes);
    std::shared_ptr<const CachedObject> find(Store& store, KeyHash key);

private:
    uint64_t budget_;
    uint64_t held_ = 0;
    // The memfds the kept copies hold (CachedObject::body_file), and at most
    // how many.
    uint64_t files_held_ = 0;
    uint64_t max_files_ = 1024;
    // (store, entry, generation) -> the copy; the generation changes when
    // the entry holds another object, so a copy is never taken for a newer one.
    std::unordered_map<uint64_t, std::pair<const Store*, std::shared_ptr<const CachedObject>>>
        copies_;
};

}  // namespace portico::cache
