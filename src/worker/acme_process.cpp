#include "worker/acme_process.hpp"

#include <dirent.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "acme/renewals.hpp"
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

}  // namespace

pid_t start_acme_process(const config::Config& config, acme::Board& board,
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
    acme::Renewals(config, board).run();
}

}  // namespace portico::worker
