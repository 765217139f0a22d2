#include "static/file_cache.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>

#include "core/log.hpp"
#include "http/conditional.hpp"

namespace portico::staticfiles {

using http::make_etag;

namespace {

bool same_file(const struct stat& a, const struct stat& b) {
    return a.st_dev == b.st_dev && a.st_ino == b.st_ino && a.st_size == b.st_size &&
           a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec;
}

// The opened file's real path, read back from the kernel: this checks what
// was actually opened, so a symbolic link swapped in between cannot fool it.
bool inside_root(int fd, const Root& root) {
    char link[32];
    auto [end, error] = std::to_chars(link, link + sizeof link - 1, fd);
    (void)error;
    *end = '\0';
    std::string proc = std::string("/proc/self/fd/") + link;
    char target[4096];
    ssize_t length = ::readlink(proc.c_str(), target, sizeof target);
    if (length <= 0 || static_cast<size_t>(length) >= sizeof target) return false;
    std::string_view real(target, static_cast<size_t>(length));
    const std::string& base = root.real_path;
    return real == base ||
           (real.size() > base.size() && real.starts_with(base) && real[base.size()] == '/') ||
           base == "/";
}

// A file that is itself a symbolic link (a Kubernetes ConfigMap volume is
// all links; `latest.css -> app.1234.css`): inotify reports changes to its
// target under the target's directory and name, never under the link's, so
// the watch of the link's directory would leave it stale for good. Such a
// file is checked again on every request instead. (Links to directories on
// the way are fine: a directory watch follows the link to the directory.)
bool is_symbolic_link(const Root& root, std::string_view relative) {
    if (relative.empty()) return false;
    std::string path(relative);
    if (path.back() == '/') path.pop_back();
    struct stat info;
    return ::fstatat(root.fd.get(), path.c_str(), &info, AT_SYMLINK_NOFOLLOW) == 0 &&
           S_ISLNK(info.st_mode);
}

}  // namespace

std::shared_ptr<const OpenFile> FileCache::open(const Root& root, std::string_view relative,
                                                int& error) {
    char fd_text[16];
    auto [end, unused] = std::to_chars(fd_text, fd_text + sizeof fd_text, root.fd.get());
    (void)unused;
    key_.assign(fd_text, end);
    key_.push_back('\0');
    size_t root_key_length = key_.size();
    key_.append(relative);

    auto it = entries_.find(std::string_view(key_));
    if (it != entries_.end() && it->second.watched) return it->second.file;

    std::shared_ptr<const OpenFile> fresh = open_uncached(root, relative, error);
    if (!fresh) {
        // Errors are not cached: a file created now is served now.
        if (it != entries_.end()) entries_.erase(it);
        return nullptr;
    }
    if (it != entries_.end()) {
        // Unwatched: unchanged keeps the descriptor responses in flight use.
        if (same_file(it->second.file->info, fresh->info)) return it->second.file;
        it->second.file = fresh;
        return fresh;
    }
    // Watched only once opened, so a path that does not exist (a proxied
    // path under `root` + `proxy`) costs no watch. A change between the open
    // and a watch that just started would be missed: open again then.
    std::string_view root_key(key_.data(), root_key_length);
    DirectoryWatch::Outcome watched = is_symbolic_link(root, relative)
                                          ? DirectoryWatch::Outcome::not_watched
                                          : watch_.watch_parents(root_key, root.real_path, relative);
    if (watched == DirectoryWatch::Outcome::newly_watched) {
        fresh = open_uncached(root, relative, error);
        if (!fresh) return nullptr;
    }
    make_room();
    entries_.emplace(key_, Entry{fresh, watched != DirectoryWatch::Outcome::not_watched});
    return fresh;
}

void FileCache::on_changed(std::string_view key, bool below_too) {
    if (!below_too) {
        auto it = entries_.find(key);
        if (it != entries_.end()) entries_.erase(it);
        return;
    }
    std::erase_if(entries_, [key](const auto& entry) { return key_within(entry.first, key); });
}

void FileCache::on_everything_changed() {
    log::warn(
        "file change events were lost (inotify queue overflow); every cached file is "
        "opened again");
    entries_.clear();
}

std::shared_ptr<const OpenFile> FileCache::open_uncached(const Root& root, std::string_view relative,
                                                         int& error) const {
    std::string path = relative.empty() ? std::string(".") : std::string(relative);
    int fd = ::openat(root.fd.get(), path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        error = errno;
        return nullptr;
    }
    auto file = std::make_shared<OpenFile>();
    file->fd.reset(fd);
    if (!inside_root(fd, root)) {
        error = ENOENT;
        return nullptr;
    }
    if (::fstat(fd, &file->info) != 0) {
        error = errno;
        return nullptr;
    }
    file->etag = make_etag(file->info.st_mtim, file->info.st_size);
    if (S_ISREG(file->info.st_mode) && file->info.st_size <= max_cached_bytes) {
        file->contents.resize(static_cast<size_t>(file->info.st_size));
        ssize_t read = ::pread(fd, file->contents.data(), file->contents.size(), 0);
        // A file that changed while read is sent with sendfile instead.
        file->has_contents = read == file->info.st_size;
        if (!file->has_contents) file->contents.clear();
    }
    core::format_http_date(file->info.st_mtim.tv_sec, file->last_modified);
    return file;
}

void FileCache::make_room() {
    if (entries_.size() < max_entries) return;
    // Any quarter: an entry dropped costs one open when next asked for.
    for (auto it = entries_.begin(); entries_.size() > max_entries * 3 / 4;) it = entries_.erase(it);
}

}  // namespace portico::staticfiles
