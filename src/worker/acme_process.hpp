// The ACME process: forked by the master beside the workers (as nginx's
// cache manager is), it orders and renews the certificates of the sites
// with `acme = true` (acme/renewals.hpp) and fetches the OCSP responses the
// workers staple (acme/staples.hpp). Its own process, so its blocking
// requests to the CA and the responders (each with a timeout) never hold
// up the master's loop or a worker, and no thread shares the master with
// fork(): a forked worker never inherits a lock that a thread held. It runs
// as the master's user, the owner of the storage folder.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <memory>

#include "acme/board.hpp"
#include "acme/staple_board.hpp"
#include "config/config.hpp"
#include "tls/server_tls.hpp"

namespace portico::worker {

// The new process's pid, or -1 when fork failed. `board`: the ACME board
// (nullptr without [acme]); `staples`: the staple board, with `tls` the
// certificates to staple (nullptr: no stapling). `held_signals` are
// unblocked in the child (the master keeps them for its signalfd).
pid_t start_acme_process(const config::Config& config, acme::Board* board,
                         acme::StapleBoard* staples, const tls::ServerTls* tls,
                         const sigset_t& held_signals);

// The staple board for `tls`'s certificates, which then staple from it,
// when `config` has a certificate to staple (acme::Staples::wanted); else,
// or when no shared memory is given (logged), nullptr.
std::unique_ptr<acme::StapleBoard> make_staple_board(const config::Config& config,
                                                     tls::ServerTls* tls);

}  // namespace portico::worker
