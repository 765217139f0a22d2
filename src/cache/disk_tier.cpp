#include "cache/disk_tier.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>

#include "cache/disk_loader.hpp"
#include "core/log.hpp"

namespace portico::cache {

namespace {
// Writes queued on the thread pool at a time: a disk slower than the
// upstream must not pile up copies of objects in the worker.
constexpr size_t most_writes_in_flight = 32;
// How often a worker looks whether an unfinished loader is to be taken over.
constexpr uint64_t load_claim_interval_ms = 1000;
}  // namespace

struct DiskTier::Job {
    uv_work_t work{};
    DiskTier* owner = nullptr;
    DiskZone zone;
    bool is_write = false;
    KeyHash key;
    KeyHash base;
    std::string bytes;  // a write's file; a read's
    int error = 0;      // a write's
    std::string what;
    std::optional<DiskHeader> header;  // a read's, when sound
    uint64_t largest_object = 0;       // a read's: what the memory tier takes
};

DiskTier::DiskTier(const DiskZone& zone, Store& store, uv_loop_t* loop)
    : zone_(zone), store_(store), loop_(loop) {
    load_if_unloaded();
}

DiskTier::~DiskTier() {
    for (Job* job : jobs_) job->owner = nullptr;
}

void DiskTier::load_if_unloaded() {
    if (loader_ || zone_.index->loaded()) return;
    uint64_t now = uv_now(loop_);
    if (last_load_claim_ms_ != 0 && now - last_load_claim_ms_ < load_claim_interval_ms) return;
    last_load_claim_ms_ = now;
    if (zone_.index->claim_loading(::getpid()))
        loader_ = std::make_unique<DiskLoader>(zone_, loop_);
}

bool DiskTier::fetch(KeyHash key) {
    load_if_unloaded();
    if (std::find(reading_.begin(), reading_.end(), key) != reading_.end()) return true;
    if (!zone_.index->holds(key)) return false;
    auto job = std::make_unique<Job>();
    job->key = key;
    job->largest_object = store_.max_object_bytes();
    if (!start(job.release())) return false;
    reading_.push_back(key);
    return true;
}

void DiskTier::write(KeyHash key, KeyHash base, const ObjectFacts& facts,
                     std::span<const std::string_view> parts) {
    load_if_unloaded();
    if (writes_in_flight_ >= most_writes_in_flight) {
        uint64_t left_out = 0;
        if (writes_behind_.allow(uv_now(loop_), left_out))
            log::warn(
                "cache '{}': {} disk writes in flight already; an object stays in memory only "
                "({} more since the last line)",
                zone_.name, most_writes_in_flight, left_out);
        return;
    }
    auto job = std::make_unique<Job>();
    job->is_write = true;
    job->key = key;
    job->base = base;
    job->bytes = encode_disk_object(key, base, facts, parts);
    start(job.release());
}

bool DiskTier::start(Job* job) {
    std::unique_ptr<Job> owned(job);
    job->owner = this;
    job->zone = zone_;
    job->work.data = job;
    if (int error = uv_queue_work(loop_, &job->work, run_job, job_done); error != 0) {
        log::error("cache '{}': cannot queue a disk job: {}", zone_.name, uv_strerror(error));
        return false;
    }
    if (job->is_write) ++writes_in_flight_;
    jobs_.push_back(owned.release());
    return true;
}

void DiskTier::run_job(uv_work_t* work) {
    Job& job = *static_cast<Job*>(work->data);
    if (job.is_write) {
        job.error = write_disk_object(job.zone, job.key, job.base, job.bytes, job.what);
        std::string().swap(job.bytes);
    } else {
        job.header = read_disk_object(job.zone, job.key, job.bytes);
        // Written when the memory tier was larger (before a restart with
        // less `memory`): it can no longer go back, and is not kept.
        if (job.header && job.bytes.size() - sizeof(DiskHeader) > job.largest_object) {
            delete_disk_object(job.zone, job.key);
            job.header.reset();
        }
    }
}

void DiskTier::job_done(uv_work_t* work, int) {
    std::unique_ptr<Job> job(static_cast<Job*>(work->data));
    DiskTier* self = job->owner;
    if (self == nullptr) return;
    std::erase(self->jobs_, job.get());
    if (job->is_write) {
        --self->writes_in_flight_;
        if (job->error != 0) self->report_write_error(*job);
    } else {
        std::erase(self->reading_, job->key);
        self->finish_read(*job);
        for (DiskReadWaiter* waiter : self->waiters_) waiter->disk_read_ended();
    }
}

// Back into memory, unless a newer copy was stored there meanwhile.
void DiskTier::finish_read(Job& job) {
    if (!job.header) return;
    std::string_view payload = std::string_view(job.bytes).substr(sizeof(DiskHeader));
    core::SharedLock lock(store_.mutex());
    ReadObject present;
    if (store_.find(job.key, present, nullptr)) return;
    // It fits (checked on the pool); were it refused all the same, the
    // index forgets it, or each request would read it again.
    if (!store_.insert(job.key, job.header->facts, std::span<const std::string_view>(&payload, 1)))
        zone_.index->remove(job.key);
}

void DiskTier::report_write_error(const Job& job) {
    uint64_t left_out = 0;
    if (write_errors_.allow(uv_now(loop_), left_out))
        log::error(
            "cache '{}': cannot write to disk: {}: {}; the object stays in memory only ({} more "
            "write errors since the last line)",
            zone_.name, job.what, std::strerror(job.error), left_out);
}

}  // namespace portico::cache
