// The disk tier's loader (nginx's cache loader): after a start on a folder
// that already holds objects, it reads each file's header and puts the
// sound ones into the zone's index, deleting the files that are truncated,
// of another layout or misplaced, and temporary files left by a write that
// never finished. It runs in one worker, on libuv's thread pool, one of the
// 256 top folders per job, so neither the start nor the first requests wait
// for it: a request for an object it has not reached yet is a miss (its
// store then replaces the file).
#pragma once

#include <uv.h>

#include <cstdint>

#include "cache/disk_io.hpp"

namespace portico::cache {

class DiskLoader {
public:
    // Starts at once; the index is marked loaded when the last folder is done.
    DiskLoader(const DiskZone& zone, uv_loop_t* loop);
    ~DiskLoader();
    DiskLoader(const DiskLoader&) = delete;
    DiskLoader& operator=(const DiskLoader&) = delete;

private:
    struct Job;
    static void scan(uv_work_t* work);
    static void scanned(uv_work_t* work, int status);
    void next();

    DiskZone zone_;
    uv_loop_t* loop_;
    Job* job_ = nullptr;  // in flight
    unsigned next_folder_ = 0;
    uint64_t objects_ = 0;
    uint64_t deleted_ = 0;
    uint64_t started_ms_ = 0;
};

}  // namespace portico::cache
