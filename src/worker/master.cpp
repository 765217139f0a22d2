#include "worker/master.hpp"

#include <poll.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <map>

#include <spdlog/spdlog.h>

#include "core/listen_socket.hpp"
#include "core/log.hpp"
#include "worker/worker.hpp"

namespace portico::worker {

namespace {

int64_t monotonic_ms() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// A worker that lived this long was healthy: its exit starts no back-off.
constexpr int64_t healthy_uptime_ms = 10'000;
constexpr int64_t first_backoff_ms = 250;
constexpr int64_t max_backoff_ms = 10'000;

sigset_t handled_signals() {
    sigset_t set;
    sigemptyset(&set);
    for (int signum : {SIGCHLD, SIGHUP, SIGTERM, SIGINT, SIGQUIT, SIGUSR1}) sigaddset(&set, signum);
    return set;
}

std::string describe_exit(int status) {
    if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) return std::string("was killed by signal ") + strsignal(WTERMSIG(status));
    return "stopped";
}

}  // namespace

Master::Master(std::string config_path, std::unique_ptr<config::Config> config)
    : config_path_(std::move(config_path)), config_(std::move(config)) {}

bool Master::open_sockets(const config::Config& config) {
    std::vector<ListenSocket> opened;
    for (const config::SocketAddress& address : config.server.listen) {
        uint16_t port = 0;
        for (unsigned slot = 0; slot < config.server.workers; ++slot) {
            // Keep the socket a previous config opened: its accept queue
            // carries over to the new workers.
            auto kept = std::find_if(sockets_.begin(), sockets_.end(), [&](const ListenSocket& s) {
                return s.address == address.text && s.slot == slot && s.fd;
            });
            if (kept != sockets_.end()) {
                opened.push_back(std::move(*kept));
                continue;
            }
            std::string error;
            core::UniqueFd fd = core::open_listen_socket(address, &port, error);
            if (!fd) {
                spdlog::error("cannot listen on {}: {}", address.text, error);
                // Put back what was taken so the old config keeps its sockets.
                for (ListenSocket& socket : opened)
                    if (socket.fd) sockets_.push_back(std::move(socket));
                return false;
            }
            if (slot == 0)
                spdlog::info("listening on {} (port {})", address.text, port);
            opened.push_back({address.text, slot, std::move(fd)});
        }
    }
    // Sockets of addresses no longer listed close here; the old workers'
    // copies keep them alive until those workers have drained.
    sockets_ = std::move(opened);
    return true;
}

bool Master::spawn(unsigned slot) {
    metrics::SharedCounters::Lease lease = counters_->lease_slot(slot);
    if (lease.shared)
        spdlog::warn("every counters slot is taken: worker {} shares one, its counts may slip",
                     slot);
    pid_t master = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        spdlog::error("fork: {}", std::strerror(errno));
        return false;
    }
    if (pid == 0) {
        sigset_t set = handled_signals();
        sigprocmask(SIG_UNBLOCK, &set, nullptr);
        for (int signum : {SIGCHLD, SIGHUP, SIGTERM, SIGINT, SIGQUIT, SIGUSR1}) signal(signum, SIG_DFL);
        ::close(signal_fd_.release());
        std::vector<int> mine;
        for (ListenSocket& socket : sockets_) {
            if (socket.slot == slot) mine.push_back(socket.fd.release());
            else ::close(socket.fd.release());
        }
        ::close(metrics_.fd());
        _exit(run_worker(*config_, slot, mine, *counters_, lease.slot, master));
    }
    int64_t now = monotonic_ms();
    workers_.push_back({pid, slot, generation_, now, false, lease.slot});
    spdlog::info("started worker {} (pid {})", slot, pid);
    return true;
}

int Master::run() {
    signal(SIGPIPE, SIG_IGN);
    sigset_t set = handled_signals();
    sigprocmask(SIG_BLOCK, &set, nullptr);
    signal_fd_.reset(signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
    if (!signal_fd_) {
        spdlog::critical("signalfd: {}", std::strerror(errno));
        return 1;
    }
    std::string error;
    counters_ = metrics::SharedCounters::create(metrics::capacity_for(*config_), error);
    if (!counters_) {
        spdlog::critical("cannot create the shared counters: {}", error);
        return 1;
    }
    counters_->register_names(*config_);
    if (!open_sockets(*config_) || !open_metrics(*config_)) return 1;
    slots_.assign(config_->server.workers, {});
    for (unsigned slot = 0; slot < config_->server.workers; ++slot) spawn(slot);

    while (!done_) {
        struct pollfd pfds[2] = {{signal_fd_.get(), POLLIN, 0}, {metrics_.fd(), POLLIN, 0}};
        int ready = ::poll(pfds, metrics_.fd() >= 0 ? 2 : 1, poll_timeout_ms());
        if (ready < 0 && errno != EINTR) {
            spdlog::critical("poll: {}", std::strerror(errno));
            return 1;
        }
        if (ready > 0 && metrics_.fd() >= 0 && (pfds[1].revents & POLLIN))
            metrics_.serve_pending(*counters_, [this] { return workers_accepting(); });
        struct signalfd_siginfo info;
        while (::read(signal_fd_.get(), &info, sizeof info) == sizeof info)
            handle_signal(static_cast<int>(info.ssi_signo));
        start_due_restarts();
        if (stopping_ && !workers_left()) done_ = true;
        if (stopping_ && !done_ && monotonic_ms() >= stop_deadline_ms_) {
            spdlog::warn("shutdown_timeout passed with workers still busy; killing them");
            signal_workers(SIGKILL);
            stop_deadline_ms_ = INT64_MAX;
        }
    }
    spdlog::info("master exiting");
    return exit_code_;
}

int Master::poll_timeout_ms() const {
    int64_t now = monotonic_ms();
    int64_t next = INT64_MAX;
    for (const SlotState& slot : slots_)
        if (slot.restart_at_ms >= 0) next = std::min(next, slot.restart_at_ms);
    if (stopping_) next = std::min(next, stop_deadline_ms_);
    if (next == INT64_MAX) return -1;
    return static_cast<int>(std::clamp<int64_t>(next - now, 0, 60'000));
}

void Master::handle_signal(int signum) {
    switch (signum) {
    case SIGCHLD:
        reap_children();
        break;
    case SIGHUP:
        if (!stopping_) reload();
        break;
    case SIGTERM:
    case SIGINT:
    case SIGQUIT:
        if (stopping_) {
            spdlog::warn("second stop signal: stopping at once");
            signal_workers(SIGKILL);
            exit_code_ = 1;
            done_ = true;
        } else {
            begin_shutdown();
        }
        break;
    case SIGUSR1:
        core::open_error_log(config_->log, "master");
        spdlog::info("log files reopened");
        signal_workers(SIGUSR1);
        break;
    default:
        break;
    }
}

void Master::reap_children() {
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        auto it = std::find_if(workers_.begin(), workers_.end(),
                               [pid](const WorkerProcess& w) { return w.pid == pid; });
        if (it == workers_.end()) continue;
        WorkerProcess worker = *it;
        workers_.erase(it);
        counters_->release_slot(worker.counter_slot);
        bool clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        if (worker.draining || stopping_) {
            spdlog::info("worker {} (pid {}) {} after draining", worker.slot, pid, describe_exit(status));
            continue;
        }
        if (worker.generation != generation_) continue;
        SlotState& slot = slots_[worker.slot];
        int64_t now = monotonic_ms();
        if (now - worker.started_ms >= healthy_uptime_ms) slot.quick_exits = 0;
        int64_t delay = slot.quick_exits == 0
                            ? 0
                            : std::min(max_backoff_ms, first_backoff_ms << std::min(slot.quick_exits, 6u));
        ++slot.quick_exits;
        slot.restart_at_ms = now + delay;
        counters_->count_worker_restart();
        auto level = clean ? spdlog::level::warn : spdlog::level::err;
        spdlog::log(level, "worker {} (pid {}) {}; restarting it in {} ms", worker.slot, pid,
                    describe_exit(status), delay);
    }
}

void Master::start_due_restarts() {
    if (stopping_) return;
    int64_t now = monotonic_ms();
    for (unsigned i = 0; i < slots_.size(); ++i) {
        if (slots_[i].restart_at_ms < 0 || slots_[i].restart_at_ms > now) continue;
        slots_[i].restart_at_ms = -1;
        if (!spawn(i)) slots_[i].restart_at_ms = now + max_backoff_ms;
    }
}

void Master::reload() {
    spdlog::info("reloading {}", config_path_);
    config::LoadResult loaded = config::load_config_file(config_path_);
    if (!loaded.config) {
        for (const config::ConfigError& error : loaded.errors) spdlog::error("{}", error.to_string());
        spdlog::error("reload failed: {} problem(s) in {}; still serving with the previous config",
                      loaded.errors.size(), config_path_);
        counters_->count_config_reload(false);
        return;
    }
    auto next = std::make_unique<config::Config>(std::move(*loaded.config));
    if (!open_sockets(*next)) {
        spdlog::error("reload failed: cannot open the new listening sockets; still serving with "
                      "the previous config");
        counters_->count_config_reload(false);
        return;
    }
    if (!open_metrics(*next)) {
        spdlog::error("reload failed: cannot open the new metrics listener; still serving with "
                      "the previous config");
        counters_->count_config_reload(false);
        return;
    }
    for (const std::string& name : counters_->register_names(*next))
        spdlog::warn("no room left in the counters for '{}': it is counted from the next restart",
                     name);
    counters_->count_config_reload(true);
    // The new workers start before the old ones stop accepting, and they
    // share each slot's socket, so no connection finds nobody listening.
    config_ = std::move(next);
    core::open_error_log(config_->log, "master");
    ++generation_;
    slots_.assign(config_->server.workers, {});
    for (WorkerProcess& worker : workers_) worker.draining = true;
    for (unsigned slot = 0; slot < config_->server.workers; ++slot) spawn(slot);
    signal_workers(SIGQUIT, true);
    spdlog::info("reloaded: {} new workers, old ones draining", config_->server.workers);
}

void Master::begin_shutdown() {
    spdlog::info("shutting down: draining workers for up to {} ms", config_->server.shutdown_timeout.count());
    stopping_ = true;
    stop_deadline_ms_ = monotonic_ms() + config_->server.shutdown_timeout.count();
    signal_workers(SIGQUIT);
    // New clients are refused from now on rather than left waiting in a
    // queue nobody will accept from.
    sockets_.clear();
}

bool Master::workers_left() const { return !workers_.empty(); }

bool Master::workers_accepting() const {
    if (stopping_) return false;
    for (const WorkerProcess& worker : workers_)
        if (!worker.draining && worker.generation == generation_) return true;
    return false;
}

// Opens the metrics listener when the config has one at an address not
// already open; keeps the open one when the address is unchanged.
bool Master::open_metrics(const config::Config& config) {
    if (!config.metrics) {
        metrics_ = metrics::AdminEndpoint();
        return true;
    }
    if (metrics_.fd() >= 0 && metrics_.address() == config.metrics->listen.text) return true;
    metrics::AdminEndpoint endpoint;
    std::string error;
    if (!endpoint.open(config.metrics->listen, error)) {
        spdlog::error("{}", error);
        return false;
    }
    metrics_ = std::move(endpoint);
    return true;
}

void Master::signal_workers(int signum, bool old_generation_only) {
    for (const WorkerProcess& worker : workers_)
        if (!old_generation_only || worker.generation != generation_) ::kill(worker.pid, signum);
}

}  // namespace portico::worker
