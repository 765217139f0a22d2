// Tells the file cache which of its entries a change on disk makes stale,
// so a file rewritten, replaced, removed or made unreadable is served fresh
// from the very next request at no cost to the requests in between: one
// inotify instance per worker, read through the worker's IoPoller.
//
// What is watched: every directory on the way to a cached file (its parent,
// and theirs up to the root). A file's own changes (write, chmod, rename
// over it, removal) are reported by its parent directory with the file's
// name; a directory replaced, or a symbolic link on the way retargeted, is
// reported by the directory above it; a watched directory that goes away
// reports itself. Watching every level, not only the parent, is what makes
// the last two visible.
//
// When the events are read: as soon as the IoPoller reports them, ahead of
// the client sockets of the same batch (IoWatcher::run_first), and, for a
// connection just accepted, before its first request (see
// FileCache::read_pending_changes: the listening sockets are libuv's, whose
// level-triggered epoll may report a new connection before an older change).
//
// Keys are the file cache's: a root's prefix (ending in '\0') followed by the
// path relative to the root, "dir/file" ("" is the root itself).
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/io_poller.hpp"
#include "core/unique_fd.hpp"

namespace portico::staticfiles {

// True when `key` is `base` or lies below it.
bool key_within(std::string_view key, std::string_view base);

class DirectoryWatch {
public:
    class Listener {
    public:
        // The entry `key` is stale, and so is everything below it when
        // `below_too` (a directory, or a name that may lead to one).
        virtual void on_changed(std::string_view key, bool below_too) = 0;
        // Events were lost (the kernel's queue overflowed): everything is.
        virtual void on_everything_changed() = 0;

    protected:
        ~Listener() = default;
    };

    enum class Outcome {
        already_watched,  // every directory on the way was watched before
        newly_watched,    // some just started: a change just before is not seen
        not_watched,      // inotify is unavailable or out of watches
    };

    DirectoryWatch(core::IoPoller& poller, Listener& listener);
    ~DirectoryWatch();
    DirectoryWatch(const DirectoryWatch&) = delete;
    DirectoryWatch& operator=(const DirectoryWatch&) = delete;

    // Watches the directories on the way to `relative` under the root at
    // `root_real_path`, whose keys start with `root_key`.
    Outcome watch_parents(std::string_view root_key, const std::string& root_real_path,
                          std::string_view relative);
    // Takes the changes the kernel has queued now (one read when none).
    void read_events();

private:
    static void on_io(void* self, int events);
    void on_event(int wd, uint32_t mask, std::string_view name);
    // Stops watching the directories at `key` and below: a path that now
    // names another directory is watched afresh when next needed.
    void forget_within(std::string_view key);
    void forget(int wd);
    void report_unavailable(const char* what, int error);

    Listener& listener_;
    core::UniqueFd fd_;
    core::IoWatcher io_;
    std::unordered_map<int, std::vector<std::string>> keys_by_watch_;  // symbolic links: several
    std::unordered_map<std::string, int> watch_by_key_;
    bool unavailable_logged_ = false;
};

}  // namespace portico::staticfiles
