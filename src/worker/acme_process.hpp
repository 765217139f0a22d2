// The ACME process: forked by the master beside the workers (as nginx's
// cache manager is), it orders and renews the certificates of the sites
// with `acme = true` (acme/renewals.hpp). Its own process, so its blocking
// requests to the CA (each with a timeout) never hold up the master's loop
// or a worker, and no thread shares the master with fork(): a forked
// worker never inherits a lock that a thread held. It runs as the master's
// user, the owner of the storage folder.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include "acme/board.hpp"
#include "config/config.hpp"

namespace portico::worker {

// The new process's pid, or -1 when fork failed. `held_signals` are
// unblocked in the child (the master keeps them for its signalfd).
pid_t start_acme_process(const config::Config& config, acme::Board& board,
                         const sigset_t& held_signals);

}  // namespace portico::worker
