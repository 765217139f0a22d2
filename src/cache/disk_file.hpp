// One object of the disk tier as a file: where it lives under the zone's
// path, and its bytes. PATH/ab/cd/<32 hex digits of the key hash> (ab, cd:
// its last four digits, so a folder holds at most a few thousand files).
// The file: a fixed header (magic and layout number, the key hash, the base
// key's hash, the object's facts with its freshness times, the sizes and a
// checksum of what follows), then the key text, the stored head, the body:
// what the memory tier holds, so a disk hit goes back into memory as is.
// Written to "<name>.tmp.<pid>.<n>" and renamed, so a reader never sees a
// partial file.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "cache/store.hpp"

namespace portico::cache {

struct DiskHeader {
    char magic[8];
    uint32_t layout;
    uint32_t header_bytes;  // sizeof(DiskHeader): a build with other facts is another layout
    KeyHash key;
    KeyHash base;
    ObjectFacts facts;
    uint64_t checksum;  // XXH3-64 of the key text, head and body
};

// The folder "ab/cd" and the file's name for `key`.
std::string disk_folder(KeyHash key);
std::string disk_name(KeyHash key);
// The key hash a file name spells; nullopt when it is not one.
std::optional<KeyHash> key_of_name(std::string_view name);

// The file's bytes: the header, then `parts` (key text, head, body).
std::string encode_disk_object(KeyHash key, KeyHash base, const ObjectFacts& facts,
                               std::span<const std::string_view> parts);
// The header of a file of `file_bytes` named for `key`, when it is of this
// layout and its size matches (the loader: the body is not read).
std::optional<DiskHeader> check_disk_header(std::string_view head, uint64_t file_bytes,
                                            KeyHash key);
// A whole file read: its header when complete and its checksum holds; the
// key text, head and body follow it in `bytes`.
std::optional<DiskHeader> check_disk_object(std::string_view bytes, KeyHash key);

}  // namespace portico::cache
