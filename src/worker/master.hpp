// The master process: binds the listening sockets, forks the workers, keeps
// them running, and turns signals into reloads and shutdowns. It serves no
// traffic and runs no libuv loop (a forked child must not inherit one): a
// signalfd and poll(2) are all it needs.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "core/unique_fd.hpp"
#include "metrics/admin_endpoint.hpp"
#include "metrics/shared_counters.hpp"

namespace portico::worker {

class Master {
public:
    Master(std::string config_path, std::unique_ptr<config::Config> config);
    int run();  // returns the process exit code

private:
    struct WorkerProcess {
        pid_t pid = -1;
        unsigned slot = 0;
        unsigned generation = 0;
        int64_t started_ms = 0;
        bool draining = false;
        unsigned counter_slot = 0;
    };
    struct SlotState {
        unsigned quick_exits = 0;  // exits soon after start, in a row: the back-off
        int64_t restart_at_ms = -1;
    };
    // One SO_REUSEPORT socket per `listen` entry per worker slot.
    struct ListenSocket {
        std::string address;
        unsigned slot;
        core::UniqueFd fd;
    };

    bool open_sockets(const config::Config& config);
    bool open_metrics(const config::Config& config);
    bool workers_accepting() const;
    bool spawn(unsigned slot);
    void handle_signal(int signum);
    void reap_children();
    void reload();
    void begin_shutdown();
    void start_due_restarts();
    int poll_timeout_ms() const;
    bool workers_left() const;
    void signal_workers(int signum, bool old_generation_only = false);

    std::string config_path_;
    std::unique_ptr<config::Config> config_;
    std::vector<ListenSocket> sockets_;
    std::vector<WorkerProcess> workers_;
    std::vector<SlotState> slots_;
    unsigned generation_ = 0;
    core::UniqueFd signal_fd_;
    std::unique_ptr<metrics::SharedCounters> counters_;
    metrics::AdminEndpoint metrics_;
    bool stopping_ = false;
    int64_t stop_deadline_ms_ = 0;
    bool done_ = false;
    int exit_code_ = 0;
};

}  // namespace portico::worker
