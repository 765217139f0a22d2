#include "metrics/saved_snapshots.hpp"

#include <algorithm>

namespace portico::metrics {

bool valid_snapshot_name(std::string_view name) {
    if (name.empty() || name.size() > max_snapshot_name_length) return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
               c == '.' || c == '_' || c == '-';
    });
}

SavedSnapshots::Saved SavedSnapshots::save(std::string name, Snapshot counters, uint64_t now_ns,
                                           int64_t now_unix_ms) {
    bool replaced = false;
    auto same = std::find_if(saved_.begin(), saved_.end(),
                             [&](const SavedSnapshot& saved) { return saved.name == name; });
    if (same != saved_.end()) {
        saved_.erase(same);
        replaced = true;
    }
    std::optional<std::string> dropped;
    if (saved_.size() == capacity) {
        dropped = std::move(saved_.front().name);
        saved_.pop_front();
    }
    saved_.push_back({.name = std::move(name),
                      .counters = std::move(counters),
                      .counted_ns = now_ns > counting_since_ns_ ? now_ns - counting_since_ns_ : 0,
                      .taken_unix_ms = now_unix_ms});
    return {saved_.back(), replaced, std::move(dropped)};
}

const SavedSnapshot* SavedSnapshots::find(std::string_view name) const {
    for (const SavedSnapshot& saved : saved_)
        if (saved.name == name) return &saved;
    return nullptr;
}

}  // namespace portico::metrics
