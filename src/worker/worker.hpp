// A worker process: one libuv loop serving client connections accepted on
// the listening sockets the master handed down.
#pragma once

#include <vector>

#include "config/config.hpp"

namespace portico::worker {

// Runs until drained (SIGQUIT or SIGTERM from the master: stop accepting,
// finish in-flight requests, close idle connections). Returns the exit code.
int run_worker(const config::Config& config, unsigned slot, const std::vector<int>& listen_fds);

}  // namespace portico::worker
