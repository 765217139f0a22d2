// A worker process: one libuv loop serving client connections accepted on
// the listening sockets the master handed down.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <vector>

#include "access/limit_zones.hpp"
#include "acme/board.hpp"
#include "cache/cache_zones.hpp"
#include "config/config.hpp"
#include "metrics/shared_counters.hpp"
#include "tls/server_tls.hpp"
#include "tls/upstream_tls.hpp"

namespace portico::worker {

// What the master made before the fork and the worker serves with, beside
// its config.
struct Inherited {
    const tls::ServerTls* tls;                // [tls]'s certificates (nullptr without one)
    const tls::UpstreamTlsSet& upstream_tls;  // the contexts of the upstreams with `tls`
    const acme::Board* acme_board;     // what the ACME process publishes (nullptr: no [acme])
    const access::LimitZones& limits;  // the limits' tables, shared with the other workers
    const cache::CacheZones& caches;   // the response cache's stores, shared likewise
};

// A listening socket the master handed down.
struct ListenFd {
    int fd;
    bool tls;  // its connections start with a TLS handshake
    bool proxy_protocol;  // ... after a PROXY protocol header
    unsigned listener;    // its config entry (config::listeners_of's index)
};

// Runs until drained (SIGQUIT or SIGTERM from the master: stop accepting,
// finish in-flight requests, close idle connections). Returns the exit code.
// `counter_slot`: the slot of the shared counters this process writes.
// `ready_fd`: the master's pipe, told this process's pid once it accepts.
// `held_signals`: blocked since the fork, unblocked once the loop handles
// them, so a signal sent meanwhile waits for the handler instead of killing.
int run_worker(const config::Config& config, const Inherited& inherited, unsigned slot,
               const std::vector<ListenFd>& listen_fds, metrics::SharedCounters& counters,
               unsigned counter_slot, pid_t master, int ready_fd, const sigset_t& held_signals);

}  // namespace portico::worker
