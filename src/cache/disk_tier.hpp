// A worker's side of a zone's disk tier ([cache.NAME] path): every object
// the memory tier stores is also written to a file (write-through), and a
// memory miss on an object the index says is on disk reads the file back
// into memory, where the request that waits for it (a LockWait, as for
// `lock`, woken when the read ended) finds it.
//
// The files are written and read on libuv's thread pool (uv_queue_work), a
// whole object per job: the worker's loop only copies the object into a
// buffer and, for a read, into the shared memory, as a store from the
// upstream does. A bounded number of writes is in flight at a time; past
// it, objects stay in memory only. A write that fails (ENOSPC, EIO, a
// folder that is gone or read-only) is logged at most once per second with
// the count of those left out, and the cache goes on without that file: no
// request fails for it.
//
// The first worker to start on an index that was never loaded runs the
// loader (cache/disk_loader.hpp) on the pool too.
#pragma once

#include <uv.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cache/disk_io.hpp"
#include "cache/store.hpp"
#include "core/log_throttle.hpp"

namespace portico::cache {

class DiskLoader;

// A request handler whose requests may wait for a read: told when one
// ended, so they look at the store again then rather than at their next poll.
class DiskReadWaiter {
public:
    virtual void disk_read_ended() = 0;

protected:
    ~DiskReadWaiter() = default;
};

class DiskTier {
public:
    DiskTier(const DiskZone& zone, Store& store, uv_loop_t* loop);
    ~DiskTier();
    DiskTier(const DiskTier&) = delete;
    DiskTier& operator=(const DiskTier&) = delete;

    // A memory miss on `key`: true when the disk holds it, and a read (one
    // per key at a time) is on its way to put it back into memory.
    bool fetch(KeyHash key);
    // A stored object (`base`: the hash of its key text), written through.
    void write(KeyHash key, KeyHash base, const ObjectFacts& facts,
               std::span<const std::string_view> parts);
    void add_waiter(DiskReadWaiter& waiter) { waiters_.push_back(&waiter); }
    void remove_waiter(DiskReadWaiter& waiter) { std::erase(waiters_, &waiter); }

private:
    struct Job;
    static void run_job(uv_work_t* work);
    static void job_done(uv_work_t* work, int status);
    bool start(Job* job);  // false when it could not be queued (and is freed)
    void finish_read(Job& job);
    void report_write_error(const Job& job);
    void load_if_unloaded();

    DiskZone zone_;
    Store& store_;
    uv_loop_t* loop_;
    std::vector<Job*> jobs_;  // in flight: forgotten by the destructor, freed when done
    std::vector<KeyHash> reading_;
    std::vector<DiskReadWaiter*> waiters_;
    size_t writes_in_flight_ = 0;
    core::LogThrottle write_errors_;
    core::LogThrottle writes_behind_;
    std::unique_ptr<DiskLoader> loader_;
    uint64_t last_load_claim_ms_ = 0;
};

}  // namespace portico::cache
