// A worker process: one libuv loop serving client connections accepted on
// the listening sockets the master handed down.
#pragma once

#include <sys/types.h>

#include <vector>

#include "config/config.hpp"
#include "metrics/shared_counters.hpp"

namespace portico::worker {

// Runs until drained (SIGQUIT or SIGTERM from the master: stop accepting,
// finish in-flight requests, close idle connections). Returns the exit code.
// `counter_slot`: the slot of the shared counters this process writes.
int run_worker(const config::Config& config, unsigned slot, const std::vector<int>& listen_fds,
               metrics::SharedCounters& counters, unsigned counter_slot, pid_t master);

}  // namespace portico::worker
