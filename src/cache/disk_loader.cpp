#include "cache/disk_loader.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "core/log.hpp"
#include "core/unique_fd.hpp"

namespace portico::cache {

namespace {

constexpr unsigned top_folders = 256;
// A temporary file this old belongs to a write that died with its worker
// (a write in flight takes milliseconds).
constexpr int64_t abandoned_after_ms = 10 * 60 * 1000;

std::string hex_byte(unsigned value) {
    constexpr char digits[] = "0123456789abcdef";
    return {digits[value >> 4 & 0xf], digits[value & 0xf]};
}

std::vector<std::string> entries_of(const std::string& folder) {
    std::vector<std::string> names;
    DIR* dir = ::opendir(folder.c_str());
    if (dir == nullptr) return names;
    while (dirent* entry = ::readdir(dir)) {
        std::string_view name = entry->d_name;
        if (name != "." && name != "..") names.emplace_back(name);
    }
    ::closedir(dir);
    return names;
}

int64_t mtime_ms(const struct stat& about) {
    return int64_t{about.st_mtim.tv_sec} * 1000 + about.st_mtim.tv_nsec / 1000000;
}

}  // namespace

struct DiskLoader::Job {
    uv_work_t work{};
    DiskLoader* owner = nullptr;
    DiskZone zone;
    std::string folder;  // "ab"
    uint64_t objects = 0;
    uint64_t deleted = 0;

    // One file of folder/sub: into the index, or deleted.
    void load_file(const std::string& sub, const std::string& name, int64_t now_ms) {
        std::string path = zone.root + "/" + folder + "/" + sub + "/" + name;
        struct stat about {};
        if (::lstat(path.c_str(), &about) != 0 || !S_ISREG(about.st_mode)) return;
        auto remove = [&] {
            if (::unlink(path.c_str()) == 0) ++deleted;
        };
        if (name.find(".tmp.") != std::string::npos) {
            if (now_ms - mtime_ms(about) > abandoned_after_ms) remove();
            return;
        }
        std::optional<KeyHash> key = key_of_name(name);
        if (!key || disk_folder(*key) != folder + "/" + sub) return remove();
        // The size of the file read, not of the name's: a worker may have
        // renamed a new one over it since the lstat.
        core::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
        if (!fd || ::fstat(fd.get(), &about) != 0) return;
        std::string head(sizeof(DiskHeader), '\0');
        ssize_t got = ::read(fd.get(), head.data(), head.size());
        head.resize(got > 0 ? static_cast<size_t>(got) : 0);
        std::optional<DiskHeader> header =
            check_disk_header(head, static_cast<uint64_t>(about.st_size), *key);
        if (!header) return remove();
        std::vector<KeyHash> evicted;
        zone.index->add(
            {*key, header->base, static_cast<uint64_t>(about.st_size), mtime_ms(about), true}, true,
            evicted);
        ++objects;
        for (KeyHash old : evicted)
            if (::unlink(zone.path_of(old).c_str()) == 0) ++deleted;
    }
};

DiskLoader::DiskLoader(const DiskZone& zone, uv_loop_t* loop)
    : zone_(zone), loop_(loop), started_ms_(uv_now(loop)) {
    next();
}

DiskLoader::~DiskLoader() {
    if (job_ != nullptr) job_->owner = nullptr;
}

void DiskLoader::next() {
    if (next_folder_ == top_folders) {
        zone_.index->finish_loading();
        log::info(
            "cache '{}': the disk loader indexed {} objects of {} and deleted {} files in {} ms",
            zone_.name, objects_, zone_.root, deleted_, uv_now(loop_) - started_ms_);
        return;
    }
    auto job = std::make_unique<Job>();
    job->owner = this;
    job->zone = zone_;
    job->folder = hex_byte(next_folder_++);
    job->work.data = job.get();
    if (int error = uv_queue_work(loop_, &job->work, scan, scanned); error != 0) {
        log::error("cache '{}': cannot start the disk loader: {}", zone_.name, uv_strerror(error));
        return;
    }
    job_ = job.release();
}

void DiskLoader::scan(uv_work_t* work) {
    Job& job = *static_cast<Job*>(work->data);
    int64_t now_ms = wall_clock_ms();
    std::string top = job.zone.root + "/" + job.folder;
    for (const std::string& sub : entries_of(top))
        for (const std::string& name : entries_of(top + "/" + sub))
            job.load_file(sub, name, now_ms);
}

void DiskLoader::scanned(uv_work_t* work, int) {
    std::unique_ptr<Job> job(static_cast<Job*>(work->data));
    DiskLoader* self = job->owner;
    if (self == nullptr) return;
    self->job_ = nullptr;
    self->objects_ += job->objects;
    self->deleted_ += job->deleted;
    self->next();
}

}  // namespace portico::cache
