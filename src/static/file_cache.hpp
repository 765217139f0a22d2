// Open descriptors and stat results of served files, kept per worker (nginx's
// open_file_cache), so a hot file costs no open, fstat or close per request.
// Unlike nginx's, an entry is never stale: the DirectoryWatch drops it as
// soon as the kernel reports a change to the file or to a directory on its
// way, so the next request opens the file again. Where a file can't be
// watched (inotify unavailable, or out of watches) its entry is checked
// again on every request.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/http_date.hpp"
#include "core/io_poller.hpp"
#include "core/unique_fd.hpp"
#include "static/directory_watch.hpp"

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

class FileCache final : private DirectoryWatch::Listener {
public:
    explicit FileCache(core::IoPoller& poller) : watch_(poller, *this) {}

    // `relative`: a normalized path without its leading '/' ("" is the root
    // itself). nullptr with `error` set to an errno value when it can't be
    // opened; ENOENT also when a symbolic link leads out of the root.
    std::shared_ptr<const OpenFile> open(const Root& root, std::string_view relative, int& error);

    // Before serving connections just accepted: a file may have changed
    // after the client connected, yet before the loop saw the change (epoll
    // re-reports a ready listening socket ahead of newer events). One read
    // system call per batch of accepts, and none while nothing is cached.
    void read_pending_changes() {
        if (!entries_.empty()) watch_.read_events();
    }

private:
    struct Entry {
        std::shared_ptr<const OpenFile> file;
        bool watched = false;  // else checked again on every request
    };
    struct Hash {
        using is_transparent = void;
        size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
    };
    // Files up to this size are kept in memory: below it a sendfile call
    // costs more than copying the bytes into the head's writev.
    static constexpr off_t max_cached_bytes = 16 * 1024;
    static constexpr size_t max_entries = 4096;

    // DirectoryWatch::Listener
    void on_changed(std::string_view key, bool below_too) override;
    void on_everything_changed() override;

    std::shared_ptr<const OpenFile> open_uncached(const Root& root, std::string_view relative,
                                                  int& error) const;
    void make_room();

    std::unordered_map<std::string, Entry, Hash, std::equal_to<>> entries_;
    std::string key_;  // reused to build lookup keys without allocating
    DirectoryWatch watch_;
};

}  // namespace portico::staticfiles
