// Open descriptors and stat results of served files, kept per worker for a
// short time (nginx's open_file_cache), so a hot file costs no open, fstat or
// close per request. An entry is checked again after `validity`: if the path
// now names another file, or the file changed, the new one replaces it.
#pragma once

#include <sys/stat.h>
#include <uv.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/http_date.hpp"
#include "core/unique_fd.hpp"

namespace portico::staticfiles {

struct OpenFile {
    core::UniqueFd fd;
    struct stat info{};
    std::string etag;
    char last_modified[core::http_date_length]{};
    // A small file's bytes, read once: its response is then one writev with
    // the head, with no sendfile call (see FileCache::max_cached_bytes).
    std::string contents;
    bool has_contents = false;
    std::string_view last_modified_text() const { return {last_modified, sizeof last_modified}; }
    bool is_directory() const { return S_ISDIR(info.st_mode); }
    bool is_regular() const { return S_ISREG(info.st_mode); }
};

// A root folder, opened once: files are opened relative to it, and a file
// whose real path leaves it (through a symbolic link) is refused.
struct Root {
    core::UniqueFd fd;
    std::string real_path;  // no trailing slash
};

class FileCache {
public:
    explicit FileCache(uv_loop_t* loop) : loop_(loop) {}

    // `relative`: a normalized path without its leading '/' ("" is the root
    // itself). nullptr with `error` set to an errno value when it can't be
    // opened; ENOENT also when a symbolic link leads out of the root.
    std::shared_ptr<const OpenFile> open(const Root& root, std::string_view relative, int& error);

private:
    struct Entry {
        std::shared_ptr<const OpenFile> file;
        uint64_t checked_at_ms;
    };
    struct Hash {
        using is_transparent = void;
        size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
    };
    static constexpr uint64_t validity_ms = 1000;
    // Files up to this size are kept in memory: below it a sendfile call
    // costs more than copying the bytes into the head's writev.
    static constexpr off_t max_cached_bytes = 16 * 1024;
    static constexpr size_t max_entries = 4096;

    std::shared_ptr<const OpenFile> open_uncached(const Root& root, std::string_view relative,
                                                  int& error) const;
    void make_room(uint64_t now);

    uv_loop_t* loop_;
    std::unordered_map<std::string, Entry, Hash, std::equal_to<>> entries_;
    std::string key_;  // reused to build lookup keys without allocating
};

}  // namespace portico::staticfiles
