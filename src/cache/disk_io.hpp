// The disk tier's file operations, blocking: they run on libuv's thread
// pool for a worker (cache/disk_tier.hpp), on the loader's thread
// (cache/disk_loader.hpp), and in the master for a purge.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "cache/disk_file.hpp"
#include "cache/disk_index.hpp"

namespace portico::cache {

// A zone's disk tier: its folder and the index of what it holds.
struct DiskZone {
    std::string name;  // the zone's, for the log
    std::string root;
    DiskIndex* index = nullptr;

    std::string path_of(KeyHash key) const;
};

// Writes `bytes` (encode_disk_object) as `key`'s file and adds it to the
// index, deleting the files of the objects it evicts. 0, or the errno of
// what failed (with `what`: the call and path, for the log).
int write_disk_object(const DiskZone& zone, KeyHash key, KeyHash base, std::string_view bytes,
                      std::string& what);
// Reads `key`'s file into `bytes`; its header when whole and sound. A file
// that is not (truncated, corrupt, another layout) is deleted, and the
// object leaves the index either way.
std::optional<DiskHeader> read_disk_object(const DiskZone& zone, KeyHash key, std::string& bytes);
// Out of the index and off the disk.
void delete_disk_object(const DiskZone& zone, KeyHash key);
// POST /cache/purge in the master: the objects whose key text is `key`, or
// starts with it; their count. A prefix reads each file's key text.
size_t purge_disk(const DiskZone& zone, std::string_view key, bool prefix);

int64_t wall_clock_ms();

}  // namespace portico::cache
