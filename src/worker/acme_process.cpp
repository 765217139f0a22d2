#include "worker/acme_process.hpp"

#include <dirent.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>
#include <vector>

#include "acme/renewals.hpp"
#include "acme/staples.hpp"
#include "core/log.hpp"
#include "worker/error_log.hpp"

namespace portico::worker {

namespace {

// The master's sockets (listeners, the metrics listener and its clients):
// a copy held here would keep a closed listener accepting into a queue
// nobody serves, and a metrics client from seeing its close.
void close_inherited_sockets() {
    DIR* folder = ::opendir("/proc/self/fd");
    if (!folder) return;
    std::vector<int> sockets;
    while (const dirent* entry = ::readdir(folder)) {
        int fd = std::atoi(entry->d_name);
        struct stat info {};
        if (fd > 2 && fd != ::dirfd(folder) && ::fstat(fd, &info) == 0 && S_ISSOCK(info.st_mode))
            sockets.push_back(fd);
    }
    ::closedir(folder);
    for (int fd : sockets) ::close(fd);
}

int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// Runs whichever of the renewals and the OCSP fetches is due, one at a time.
[[noreturn]] void run_schedule(std::optional<acme::Renewals>& renewals,
                               std::optional<acme::Staples>& staples, bool follow_certificates) {
    // At most this long asleep: a clock set forward is noticed, and the
    // staples follow an ACME site's new certificate within a second.
    const int64_t longest_sleep_ms = follow_certificates ? 1'000 : 60'000;
    for (;;) {
        int64_t renewal = renewals ? renewals->due_ms() : INT64_MAX;
        int64_t staple = staples ? staples->due_ms() : INT64_MAX;
        int64_t wait = std::min(renewal, staple) - now_ms();
        if (wait > 0) {
            std::this_thread::sleep_for(
                std::chrono::milliseconds(std::min(wait, longest_sleep_ms)));
            continue;
        }
        if (renewal <= now_ms()) renewals->run_due();
        if (staple <= now_ms()) staples->run_due();
    }
}

}  // namespace

pid_t start_acme_process(const config::Config& config, acme::Board* board,
                         acme::StapleBoard* staple_board, const tls::ServerTls* tls,
                         const sigset_t& held_signals) {
    pid_t master = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        log::error("fork (the ACME process): {}", std::strerror(errno));
        return -1;
    }
    if (pid > 0) return pid;
    // It serves nothing and keeps no state that a stop could leave half
    // done (files are renamed into place): SIGTERM ends it at once, and it
    // ends with the master.
    for (int signum = 1; signum < NSIG; ++signum)
        if (sigismember(&held_signals, signum) == 1) signal(signum, SIG_DFL);
    sigprocmask(SIG_UNBLOCK, &held_signals, nullptr);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != master) _exit(0);
    close_inherited_sockets();
    open_error_log(config.log, "acme");
    std::optional<acme::Renewals> renewals;
    if (board) renewals.emplace(config, *board);
    std::optional<acme::Staples> staples;
    if (staple_board && tls) staples.emplace(config, *tls, *staple_board, board);
    run_schedule(renewals, staples, board && staples);
}

std::unique_ptr<acme::StapleBoard> make_staple_board(const config::Config& config,
                                                     tls::ServerTls* tls) {
    if (!tls || !acme::Staples::wanted(config, *tls)) return nullptr;
    std::string error;
    std::unique_ptr<acme::StapleBoard> board =
        acme::StapleBoard::create(tls->staple_slots(), error);
    if (!board) {
        log::error("no OCSP stapling: cannot map its shared memory: {}", error);
        return nullptr;
    }
    tls->staple_from(*board);
    return board;
}

}  // namespace portico::worker
