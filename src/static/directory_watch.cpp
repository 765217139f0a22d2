#include "static/directory_watch.hpp"

#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/log.hpp"

namespace portico::staticfiles {

namespace {

// Whatever can change what a path serves: its bytes (MODIFY, CLOSE_WRITE),
// its mode or owner (ATTRIB), the name now meaning another file (CREATE,
// MOVED_TO, symbolic links included) or none (DELETE, MOVED_FROM), and the
// watched directory itself going (DELETE_SELF, MOVE_SELF). ONLYDIR: a path
// that is no longer a directory is not watched by mistake.
constexpr uint32_t watched_events = IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB | IN_CREATE |
                                    IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF |
                                    IN_MOVE_SELF | IN_ONLYDIR;

// Events after which a name may stand for a different directory tree.
constexpr uint32_t name_events = IN_ISDIR | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO;

// The key of `name` inside the directory `directory_key`.
std::string child_key(std::string_view directory_key, std::string_view name) {
    std::string key(directory_key);
    if (key.back() != '\0') key.push_back('/');
    key.append(name);
    return key;
}

}  // namespace

bool key_within(std::string_view key, std::string_view base) {
    if (!key.starts_with(base)) return false;
    // A root's key ends in '\0': everything of that root is below it.
    return key.size() == base.size() || base.back() == '\0' || key[base.size()] == '/';
}

DirectoryWatch::DirectoryWatch(core::IoPoller& poller, Listener& listener)
    : listener_(listener), fd_(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) {
    if (!fd_) {
        report_unavailable("inotify_init1", errno);
        return;
    }
    io_.init(poller, fd_.get(), this, on_io);
    // A change must be seen before a request that came after it in the
    // same batch of events is served.
    io_.run_first();
    if (!io_.watch(core::io_readable)) {
        report_unavailable("epoll_ctl on the inotify descriptor", errno);
        fd_.reset();
    }
}

DirectoryWatch::~DirectoryWatch() { io_.forget(); }

void DirectoryWatch::report_unavailable(const char* what, int error) {
    if (unavailable_logged_) return;
    unavailable_logged_ = true;
    log::warn(
        "{}: {}; cached files are checked again on every request instead (raise "
        "fs.inotify.max_user_instances or fs.inotify.max_user_watches)",
        what, std::strerror(error));
}

DirectoryWatch::Outcome DirectoryWatch::watch_parents(std::string_view root_key,
                                                      const std::string& root_real_path,
                                                      std::string_view relative) {
    if (!fd_) return Outcome::not_watched;
    Outcome outcome = Outcome::already_watched;
    // "", "a", "a/b" for "a/b/c".
    size_t end = 0;
    for (;;) {
        std::string_view directory = relative.substr(0, end);
        std::string key(root_key);
        key.append(directory);
        if (!watch_by_key_.contains(key)) {
            std::string path = root_real_path;
            if (!directory.empty()) path.append("/").append(directory);
            int wd = ::inotify_add_watch(fd_.get(), path.c_str(), watched_events);
            if (wd < 0) {
                if (errno == ENOSPC || errno == ENOMEM) report_unavailable("inotify_add_watch", errno);
                return Outcome::not_watched;
            }
            keys_by_watch_[wd].push_back(key);
            watch_by_key_.emplace(std::move(key), wd);
            outcome = Outcome::newly_watched;
        }
        size_t slash = relative.find('/', end == 0 ? 0 : end + 1);
        if (slash == std::string_view::npos) return outcome;
        end = slash;
    }
}

void DirectoryWatch::on_io(void* self, int) { static_cast<DirectoryWatch*>(self)->read_events(); }

void DirectoryWatch::read_events() {
    if (!fd_) return;
    alignas(inotify_event) char buffer[16 * 1024];
    for (;;) {
        ssize_t length = ::read(fd_.get(), buffer, sizeof buffer);
        if (length <= 0) return;  // EAGAIN: all read
        for (ssize_t offset = 0; offset < length;) {
            const auto* event = reinterpret_cast<const inotify_event*>(buffer + offset);
            offset += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
            // The name is padded with NULs to its length.
            std::string_view name = event->len > 0 ? std::string_view(event->name) : std::string_view();
            on_event(event->wd, event->mask, name);
        }
    }
}

void DirectoryWatch::on_event(int wd, uint32_t mask, std::string_view name) {
    if (mask & IN_Q_OVERFLOW) {
        // A lost event may have been a directory replaced: its watch would
        // then follow the old one. Every watch starts over with the entries.
        for (const auto& [watch, keys] : keys_by_watch_) ::inotify_rm_watch(fd_.get(), watch);
        keys_by_watch_.clear();
        watch_by_key_.clear();
        listener_.on_everything_changed();
        return;
    }
    auto found = keys_by_watch_.find(wd);
    if (found == keys_by_watch_.end()) return;  // a watch already forgotten
    // Copied: forget_within may change the map.
    std::vector<std::string> directories = found->second;
    if (!name.empty()) {
        bool below_too = (mask & name_events) != 0;
        for (const std::string& directory : directories) {
            std::string key = child_key(directory, name);
            listener_.on_changed(key, below_too);
            if (below_too) forget_within(key);
        }
        return;
    }
    // The directory itself: its mode changed, or it moved or went away.
    for (const std::string& directory : directories) listener_.on_changed(directory, true);
    if (mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF)) forget(wd);
}

void DirectoryWatch::forget_within(std::string_view key) {
    std::vector<int> emptied;
    for (auto it = watch_by_key_.begin(); it != watch_by_key_.end();) {
        if (!key_within(it->first, key)) {
            ++it;
            continue;
        }
        std::vector<std::string>& keys = keys_by_watch_[it->second];
        std::erase(keys, it->first);
        if (keys.empty()) emptied.push_back(it->second);
        it = watch_by_key_.erase(it);
    }
    for (int wd : emptied) {
        keys_by_watch_.erase(wd);
        ::inotify_rm_watch(fd_.get(), wd);  // its IN_IGNORED finds nothing
    }
}

void DirectoryWatch::forget(int wd) {
    auto found = keys_by_watch_.find(wd);
    if (found == keys_by_watch_.end()) return;
    for (const std::string& key : found->second) watch_by_key_.erase(key);
    keys_by_watch_.erase(found);
    ::inotify_rm_watch(fd_.get(), wd);  // a no-op when the kernel dropped it already
}

}  // namespace portico::staticfiles

