#include "cache/disk_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <vector>

#include "core/unique_fd.hpp"

namespace portico::cache {

namespace {

// Every byte of `bytes`, or false with errno set (ENOSPC for a short write).
bool write_all(int fd, std::string_view bytes) {
    while (!bytes.empty()) {
        ssize_t n = ::write(fd, bytes.data(), bytes.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            if (n == 0) errno = ENOSPC;
            return false;
        }
        bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
}

bool read_all(int fd, char* to, size_t count) {
    while (count > 0) {
        ssize_t n = ::read(fd, to, count);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        to += n;
        count -= static_cast<size_t>(n);
    }
    return true;
}

bool make_folder(const std::string& path) {
    return ::mkdir(path.c_str(), 0700) == 0 || errno == EEXIST;
}

}  // namespace

int64_t wall_clock_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

std::string DiskZone::path_of(KeyHash key) const {
    return root + "/" + disk_folder(key) + "/" + disk_name(key);
}

int write_disk_object(const DiskZone& zone, KeyHash key, KeyHash base, std::string_view bytes,
                      std::string& what) {
    // A name no other writer uses: two workers may store one key at once.
    static std::atomic<uint64_t> written{0};
    std::string folder = zone.root + "/" + disk_folder(key);
    std::string path = folder + "/" + disk_name(key);
    std::string temporary = path + ".tmp." + std::to_string(::getpid()) + "." +
                            std::to_string(written.fetch_add(1, std::memory_order_relaxed));
    auto failed = [&](const char* call, const std::string& on) {
        int error = errno;
        what = std::string(call) + " " + on;
        return error;
    };
    if (!make_folder(zone.root + "/" + disk_folder(key).substr(0, 2)) || !make_folder(folder))
        return failed("mkdir", folder);
    core::UniqueFd fd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    if (!fd) return failed("open", temporary);
    if (!write_all(fd.get(), bytes)) {
        int error = failed("write", temporary);
        ::unlink(temporary.c_str());
        return error;
    }
    fd.reset();
    if (::rename(temporary.c_str(), path.c_str()) != 0) {
        int error = failed("rename", temporary);
        ::unlink(temporary.c_str());
        return error;
    }
    std::vector<KeyHash> evicted;
    zone.index->add({key, base, bytes.size(), wall_clock_ms(), true}, false, evicted);
    for (KeyHash old : evicted) ::unlink(zone.path_of(old).c_str());
    return 0;
}

std::optional<DiskHeader> read_disk_object(const DiskZone& zone, KeyHash key, std::string& bytes) {
    std::string path = zone.path_of(key);
    core::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    struct stat about {};
    std::optional<DiskHeader> header;
    if (fd && ::fstat(fd.get(), &about) == 0) {
        bytes.resize(static_cast<size_t>(about.st_size));
        if (read_all(fd.get(), bytes.data(), bytes.size())) header = check_disk_object(bytes, key);
    }
    if (!header) {
        // Gone (evicted by another worker meanwhile) or unsound: never served.
        if (fd) ::unlink(path.c_str());
        zone.index->remove(key);
        return std::nullopt;
    }
    zone.index->touch(key, wall_clock_ms());
    return header;
}

void delete_disk_object(const DiskZone& zone, KeyHash key) {
    zone.index->remove(key);
    ::unlink(zone.path_of(key).c_str());
}

namespace {

// The key text of `key`'s file, read from its start.
std::optional<std::string> key_text_of(const DiskZone& zone, KeyHash key) {
    core::UniqueFd fd(::open(zone.path_of(key).c_str(), O_RDONLY | O_CLOEXEC));
    struct stat about {};
    if (!fd || ::fstat(fd.get(), &about) != 0) return std::nullopt;
    std::string head(sizeof(DiskHeader), '\0');
    if (!read_all(fd.get(), head.data(), head.size())) return std::nullopt;
    std::optional<DiskHeader> header =
        check_disk_header(head, static_cast<uint64_t>(about.st_size), key);
    if (!header) return std::nullopt;
    std::string text(header->facts.key_bytes, '\0');
    if (!read_all(fd.get(), text.data(), text.size())) return std::nullopt;
    return text;
}

}  // namespace

size_t purge_disk(const DiskZone& zone, std::string_view key, bool prefix) {
    KeyHash base = hash_key(key);
    std::vector<KeyHash> candidates = zone.index->select(
        [&](const DiskIndex::Entry& entry) { return prefix || entry.base == base; });
    size_t purged = 0;
    for (KeyHash candidate : candidates) {
        std::optional<std::string> text;
        if (prefix) text = key_text_of(zone, candidate);
        if (prefix && text && !text->starts_with(key)) continue;
        delete_disk_object(zone, candidate);
        // An unreadable file goes too, uncounted: it would never be served.
        if (!prefix || text) ++purged;
    }
    return purged;
}

}  // namespace portico::cache
