// A/B snapshots: the counters saved under a name (POST /stats/snapshot), so
// two benchmark runs can be compared later (GET /stats/compare). They live
// in the master's memory, which serves the metrics listener: a restart
// forgets them, a reload keeps them.
//
// What a snapshot means: the counters since the last POST /stats/reset (or
// since portico started), together with the time counted since then. So a
// run is "reset, load, snapshot", and its req/s is its requests over that
// time. A reload does not reset: locations are keyed by name and keep
// their totals.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>

#include "metrics/snapshot.hpp"

namespace portico::metrics {

struct SavedSnapshot {
    std::string name;
    Snapshot counters;
    uint64_t counted_ns = 0;    // from the last reset (or the start) to the snapshot
    int64_t taken_unix_ms = 0;  // wall clock, for people reading the comparison
};

// Names are typed on command lines and in URLs: 1..64 characters of
// [A-Za-z0-9._-], so no quoting or percent-decoding is ever needed.
inline constexpr size_t max_snapshot_name_length = 64;
bool valid_snapshot_name(std::string_view name);

class SavedSnapshots {
public:
    // Enough for a few A/B pairs with repeats; each holds every location's
    // three histograms, so the bound is on memory as much as on clutter.
    static constexpr size_t capacity = 16;

    explicit SavedSnapshots(uint64_t now_ns) : counting_since_ns_(now_ns) {}

    // The counters were zeroed at `now_ns`: later snapshots count from there.
    void counters_reset(uint64_t now_ns) { counting_since_ns_ = now_ns; }

    struct Saved {
        const SavedSnapshot& snapshot;
        bool replaced = false;               // one of the same name was there (it is gone)
        std::optional<std::string> dropped;  // the oldest, dropped to stay within capacity
    };
    // Stores `counters` under `name` (which must be valid), as the newest.
    Saved save(std::string name, Snapshot counters, uint64_t now_ns, int64_t now_unix_ms);

    const SavedSnapshot* find(std::string_view name) const;
    // Oldest first.
    const std::deque<SavedSnapshot>& all() const { return saved_; }

private:
    uint64_t counting_since_ns_;
    std::deque<SavedSnapshot> saved_;
};

}  // namespace portico::metrics
