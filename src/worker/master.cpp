#include "worker/master.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <map>
#include <span>

#include <uv.h>

#include "core/listen_socket.hpp"
#include "core/log.hpp"
#include "acme/stats_json.hpp"
#include "worker/acme_process.hpp"
#include "worker/error_log.hpp"
#include "worker/run_as_user.hpp"
#include "worker/service_notify.hpp"
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
constexpr int64_t ticket_key_rotation_ms =
    std::chrono::duration_cast<std::chrono::milliseconds>(tls::TicketKeys::rotation_interval).count();
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
    : config_path_(std::move(config_path)), config_(std::move(config)), snapshots_(uv_hrtime()) {}

namespace {

// Whether a socket bound to `bound` serves the `listen` entry `wanted`: same
// address, and the same port unless the entry asks for any (port 0). Not by
// the entry's text: "127.0.0.1:0" reloaded as the port it got is the same
// socket, and must stay open.
bool serves(const sockaddr_storage& bound, const config::SocketAddress& wanted) {
    if (bound.ss_family != wanted.storage.ss_family) return false;
    if (bound.ss_family == AF_INET) {
        const auto& a = reinterpret_cast<const sockaddr_in&>(bound);
        const auto& b = reinterpret_cast<const sockaddr_in&>(wanted.storage);
        return a.sin_addr.s_addr == b.sin_addr.s_addr && (b.sin_port == 0 || a.sin_port == b.sin_port);
    }
    const auto& a = reinterpret_cast<const sockaddr_in6&>(bound);
    const auto& b = reinterpret_cast<const sockaddr_in6&>(wanted.storage);
    return std::memcmp(&a.sin6_addr, &b.sin6_addr, sizeof a.sin6_addr) == 0 &&
           (b.sin6_port == 0 || a.sin6_port == b.sin6_port);
}

uint16_t port_of(const sockaddr_storage& bound) {
    return ntohs(bound.ss_family == AF_INET ? reinterpret_cast<const sockaddr_in&>(bound).sin_port
                                            : reinterpret_cast<const sockaddr_in6&>(bound).sin6_port);
}

}  // namespace

// Closing a listening socket resets every connection waiting in its accept
// queue, so a reload closes none that the new config still listens on: each
// slot keeps its socket, and sockets of slots beyond a lowered `workers` are
// handed to the remaining workers rather than closed.
bool Master::open_sockets(const config::Config& config) {
    std::vector<ListenSocket> opened;
    auto take = [&](auto&& wanted) {
        for (ListenSocket& socket : sockets_)
            if (socket.fd && wanted(socket)) {
                opened.push_back(std::move(socket));
                return true;
            }
        return false;
    };
    std::vector<std::pair<const config::SocketAddress*, bool>> entries;
    for (const config::SocketAddress& address : config.server.listen) entries.emplace_back(&address, false);
    if (config.tls)
        for (const config::SocketAddress& address : config.tls->listen) entries.emplace_back(&address, true);
    for (unsigned listener = 0; listener < entries.size(); ++listener) {
        const auto& [entry, tls] = entries[listener];
        const config::SocketAddress& address = *entry;
        auto same = [&, tls = tls](const ListenSocket& s) { return s.tls == tls && serves(s.bound, address); };
        uint16_t port = 0;
        for (unsigned slot = 0; slot < config.server.workers; ++slot) {
            if (take([&](const ListenSocket& s) { return s.slot == slot && same(s); })) {
                port = port_of(opened.back().bound);
                opened.back().proxy_protocol = address.proxy_protocol;
                opened.back().listener = listener;
                continue;
            }
            std::string error;
            core::UniqueFd fd = core::open_listen_socket(address.storage, address.length,
                                                         address.text, &port, error);
            if (!fd) {
                log::error("cannot listen on {}: {}", address.text, error);
                // Put back what was taken so the old config keeps its sockets.
                for (ListenSocket& socket : opened)
                    if (socket.fd) sockets_.push_back(std::move(socket));
                return false;
            }
            if (slot == 0)
                log::info("listening on {} (port {}){}{}", address.text, port,
                          tls ? " for TLS" : "",
                          address.proxy_protocol ? " behind the PROXY protocol" : "");
            ListenSocket socket{{}, slot, std::move(fd), tls, address.proxy_protocol, listener};
            socklen_t length = sizeof socket.bound;
            ::getsockname(socket.fd.get(), reinterpret_cast<sockaddr*>(&socket.bound), &length);
            opened.push_back(std::move(socket));
        }
        while (take(same)) {
            opened.back().slot %= config.server.workers;
            opened.back().proxy_protocol = address.proxy_protocol;
            opened.back().listener = listener;
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
        log::warn("every counters slot is taken: worker {} shares one, its counts may slip", slot);
    pid_t master = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        log::error("fork: {}", std::strerror(errno));
        return false;
    }
    if (pid == 0) {
        // The handled signals stay blocked (the master's mask, for its
        // signalfd) until the worker's loop has handlers for them. Unblocked
        // here, a SIGUSR1 from logrotate while the worker starts would kill
        // it (the default action) and its reopen would be lost.
        for (int signum : {SIGCHLD, SIGHUP, SIGTERM, SIGINT, SIGQUIT, SIGUSR1}) signal(signum, SIG_DFL);
        ::close(signal_fd_.release());
        ::close(ready_read_.release());
        std::vector<ListenFd> mine;
        for (ListenSocket& socket : sockets_) {
            if (socket.slot == slot)
                mine.push_back(
                    {socket.fd.release(), socket.tls, socket.proxy_protocol, socket.listener});
            else ::close(socket.fd.release());
        }
        // None of the metrics sockets: a client the master closes must see the close.
        metrics_ = AdminEndpoint();
        _exit(run_worker(
            *config_, {tls_.get(), *upstream_tls_, acme_board_.get(), *limits_, *caches_}, slot,
            mine, *counters_, lease.slot, master, ready_write_.get(), handled_signals()));
    }
    int64_t now = monotonic_ms();
    workers_.push_back({pid, slot, generation_, now, false, lease.slot, false});
    log::info("started worker {} (pid {})", slot, pid);
    return true;
}

int Master::run() {
    signal(SIGPIPE, SIG_IGN);
    sigset_t set = handled_signals();
    sigprocmask(SIG_BLOCK, &set, nullptr);
    signal_fd_.reset(signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
    if (!signal_fd_) {
        log::critical("signalfd: {}", std::strerror(errno));
        return 1;
    }
    std::string error;
    counters_ = metrics::SharedCounters::create(metrics::capacity_for(*config_), error);
    if (!counters_) {
        log::critical("cannot create the shared counters: {}", error);
        return 1;
    }
    limits_ = access::LimitZones::create(*config_, nullptr, error);
    if (!limits_) {
        log::critical("cannot map the limits' shared tables: {}", error);
        return 1;
    }
    caches_ = cache::CacheZones::create(*config_, nullptr, error);
    if (!caches_) {
        log::critical("cannot map the cache zones: {}", error);
        return 1;
    }
    counters_->register_names(*config_);
    int ready_pipe[2];
    if (::pipe2(ready_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
        log::critical("pipe: {}", std::strerror(errno));
        return 1;
    }
    ready_read_.reset(ready_pipe[0]);
    ready_write_.reset(ready_pipe[1]);
    ticket_keys_ = tls::TicketKeys::create(error);
    if (!ticket_keys_) {
        log::critical("cannot make the TLS session ticket keys: {}", error);
        return 1;
    }
    next_key_rotation_ms_ = monotonic_ms() + ticket_key_rotation_ms;
    acme_board_ = make_acme_board(*config_);
    if (config_->acme && !acme_board_) return 1;
    if (!load_tls(*config_, acme_board_.get(), tls_, upstream_tls_)) return 1;
    file_certificates_ = tls::read_file_certificates(*config_);
    staple_board_ = make_staple_board(*config_, tls_.get());
    if (!open_sockets(*config_) || !open_metrics(*config_)) return 1;
    prepare_for_workers(*config_);
    slots_.assign(config_->server.workers, {});
    for (unsigned slot = 0; slot < config_->server.workers; ++slot) spawn(slot);
    restart_acme_process();
    ready_pending_ = true;

    metrics::AdminContext admin{
        *counters_,
        snapshots_,
        [this] { return workers_accepting(); },
        [this] { return certificate_stats(); },
        [this](std::string_view key, bool prefix) { return caches_->purge(key, prefix); },
        [this] { return caches_->render_metrics(); }};
    std::vector<pollfd> pfds;
    while (!done_) {
        // poll(2) skips an entry whose fd is -1 (no [metrics], or its
        // listener while its connections are at their limit).
        pfds.assign({{signal_fd_.get(), POLLIN, 0}, {ready_read_.get(), POLLIN, 0}});
        metrics_.add_poll_fds(pfds);
        int timeout = poll_timeout_ms();
        int64_t metrics_deadline = metrics_.next_deadline_ms(monotonic_ms());
        if (metrics_deadline >= 0 && (timeout < 0 || metrics_deadline < timeout))
            timeout = static_cast<int>(metrics_deadline);
        int ready = ::poll(pfds.data(), pfds.size(), timeout);
        if (ready < 0 && errno != EINTR) {
            log::critical("poll: {}", std::strerror(errno));
            return 1;
        }
        if (ready > 0 && (pfds[1].revents & POLLIN)) read_ready_reports();
        // Also after a timeout: it closes the metrics clients past their deadline.
        if (ready >= 0) metrics_.on_poll(std::span(pfds).subspan(2), admin, monotonic_ms());
        struct signalfd_siginfo info;
        while (::read(signal_fd_.get(), &info, sizeof info) == sizeof info)
            handle_signal(static_cast<int>(info.ssi_signo));
        start_due_restarts();
        if (acme_restart_at_ms_ >= 0 && monotonic_ms() >= acme_restart_at_ms_ && !stopping_)
            restart_acme_process();
        rotate_ticket_keys_when_due();
        if (stopping_ && !workers_left()) done_ = true;
        if (stopping_ && !done_ && monotonic_ms() >= stop_deadline_ms_) {
            log::warn("shutdown_timeout passed with workers still busy; killing them");
            signal_workers(SIGKILL);
            stop_deadline_ms_ = INT64_MAX;
        }
    }
    log::info("master exiting");
    return exit_code_;
}

int Master::poll_timeout_ms() const {
    int64_t now = monotonic_ms();
    int64_t next = INT64_MAX;
    for (const SlotState& slot : slots_)
        if (slot.restart_at_ms >= 0) next = std::min(next, slot.restart_at_ms);
    if (stopping_) next = std::min(next, stop_deadline_ms_);
    next = std::min(next, next_key_rotation_ms_);
    if (acme_restart_at_ms_ >= 0) next = std::min(next, acme_restart_at_ms_);
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
            log::warn("second stop signal: stopping at once");
            signal_workers(SIGKILL);
            exit_code_ = 1;
            done_ = true;
        } else {
            begin_shutdown();
        }
        break;
    case SIGUSR1:
        open_error_log(config_->log, "master");
        // Before the workers reopen: a file logrotate moved away is created
        // again here, for workers that may no longer create it themselves.
        prepare_for_workers(*config_);
        log::info("log files reopened");
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
        if (pid == acme_pid_) {
            acme_pid_ = -1;
            if (stopping_) continue;
            // It only ends on a crash: try again soon, not in a loop.
            constexpr int64_t acme_restart_delay_ms = 5'000;
            log::error("the ACME process (pid {}) {}; restarting it in {} ms", pid,
                       describe_exit(status), acme_restart_delay_ms);
            acme_restart_at_ms_ = monotonic_ms() + acme_restart_delay_ms;
            continue;
        }
        auto it = std::find_if(workers_.begin(), workers_.end(),
                               [pid](const WorkerProcess& w) { return w.pid == pid; });
        if (it == workers_.end()) continue;
        WorkerProcess worker = *it;
        workers_.erase(it);
        counters_->release_slot(worker.counter_slot);
        bool clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        if (worker.draining || stopping_) {
            log::info("worker {} (pid {}) {} after draining", worker.slot, pid,
                      describe_exit(status));
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
        log::Level level = clean ? log::Level::warn : log::Level::error;
        log::log(level, "worker {} (pid {}) {}; restarting it in {} ms", worker.slot, pid,
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

std::unique_ptr<acme::Board> Master::make_acme_board(const config::Config& config) {
    if (!config.acme) return nullptr;
    std::string error;
    std::unique_ptr<acme::Board> board = acme::Board::create(config.sites.size(), error);
    if (!board) log::critical("cannot make the ACME board (shared memory): {}", error);
    return board;
}

void Master::restart_acme_process() {
    acme_restart_at_ms_ = -1;
    if (acme_pid_ > 0) {
        // Its exit is reaped as an unknown child's once acme_pid_ moved on.
        ::kill(acme_pid_, SIGTERM);
        acme_pid_ = -1;
    }
    if (!acme_board_ && !staple_board_) return;
    acme_pid_ = start_acme_process(*config_, acme_board_.get(), staple_board_.get(), tls_.get(),
                                   handled_signals());
    if (acme_pid_ < 0)
        acme_restart_at_ms_ = monotonic_ms() + max_backoff_ms;
    else
        log::info("started the ACME process (pid {})", acme_pid_);
}

// The sites with `acme = true` are fed their certificates by the board, which
// the master made before and the workers inherit.
std::string Master::certificate_stats() const {
    std::string acme =
        acme::stats_json(*config_, acme_board_.get(), staple_board_.get(), tls_.get());
    std::string files = tls::file_certificates_json(file_certificates_, std::time(nullptr));
    return acme + (!acme.empty() && !files.empty() ? "," : "") + files;
}

bool Master::load_tls(const config::Config& config, const acme::Board* acme_board,
                      std::unique_ptr<tls::ServerTls>& out,
                      std::unique_ptr<tls::UpstreamTlsSet>& upstream_out) {
    out.reset();
    tls::UpstreamTlsSet::Loaded upstreams = tls::UpstreamTlsSet::load(config);
    for (const config::ConfigError& error : upstreams.errors) log::error("{}", error.to_string());
    upstream_out = std::move(upstreams.set);
    if (!upstream_out) return false;
    if (!config.tls) return true;
    tls::ServerTls::Loaded loaded = tls::ServerTls::load(
        config, config.tls->session_tickets ? ticket_keys_.get() : nullptr, acme_board);
    for (const config::ConfigError& error : loaded.errors) log::error("{}", error.to_string());
    for (const std::string& warning : loaded.warnings) log::warn("{}", warning);
    out = std::move(loaded.tls);
    return out != nullptr;
}

// Tickets made under the previous key still resume (and are renewed), so a
// client back within two rotation intervals skips the full handshake.
void Master::rotate_ticket_keys_when_due() {
    int64_t now = monotonic_ms();
    if (now < next_key_rotation_ms_) return;
    next_key_rotation_ms_ = now + ticket_key_rotation_ms;
    if (ticket_keys_->rotate())
        log::info("TLS session ticket key rotated");
    else
        log::error("TLS session ticket key rotation failed (no random bytes); keeping the key");
}

void Master::reload_failed(const std::string& why) {
    log::error("reload failed: {}; still serving with the previous config", why);
    counters_->count_config_reload(false);
    service_notify::ready("reload failed: " + why + "; serving the previous config");
}

void Master::reload() {
    log::info("reloading {}", config_path_);
    service_notify::reloading();
    config::LoadResult loaded = config::load_config_file(config_path_);
    if (!loaded.config) {
        for (const config::ConfigError& error : loaded.errors) log::error("{}", error.to_string());
        reload_failed(std::to_string(loaded.errors.size()) + " problem(s) in " + config_path_);
        return;
    }
    auto next = std::make_unique<config::Config>(std::move(*loaded.config));
    std::unique_ptr<acme::Board> next_board = make_acme_board(*next);
    if (next->acme && !next_board) {
        reload_failed("cannot make the ACME board");
        return;
    }
    std::unique_ptr<tls::ServerTls> next_tls;
    std::unique_ptr<tls::UpstreamTlsSet> next_upstream_tls;
    if (!load_tls(*next, next_board.get(), next_tls, next_upstream_tls)) {
        reload_failed("cannot load the TLS certificates");
        return;
    }
    std::unique_ptr<acme::StapleBoard> next_staples = make_staple_board(*next, next_tls.get());
    if (!open_sockets(*next)) {
        reload_failed("cannot open the new listening sockets");
        return;
    }
    if (!open_metrics(*next)) {
        reload_failed("cannot open the new metrics listener");
        return;
    }
    std::string error;
    std::unique_ptr<access::LimitZones> next_limits =
        access::LimitZones::create(*next, limits_.get(), error);
    if (!next_limits) {
        reload_failed("cannot map the limits' shared tables: " + error);
        return;
    }
    std::unique_ptr<cache::CacheZones> next_caches =
        cache::CacheZones::create(*next, caches_.get(), error);
    if (!next_caches) {
        reload_failed("cannot map the cache zones: " + error);
        return;
    }
    for (const std::string& name : counters_->register_names(*next))
        log::warn("no room left in the counters for '{}': it is counted from the next restart",
                  name);
    counters_->count_config_reload(true);
    // The new workers start before the old ones stop accepting, and they
    // share each slot's socket, so no connection finds nobody listening.
    config_ = std::move(next);
    tls_ = std::move(next_tls);
    limits_ = std::move(next_limits);
    caches_ = std::move(next_caches);
    upstream_tls_ = std::move(next_upstream_tls);
    acme_board_ = std::move(next_board);
    file_certificates_ = tls::read_file_certificates(*config_);
    staple_board_ = std::move(next_staples);
    open_error_log(config_->log, "master");
    prepare_for_workers(*config_);
    ++generation_;
    slots_.assign(config_->server.workers, {});
    for (WorkerProcess& worker : workers_) worker.draining = true;
    for (unsigned slot = 0; slot < config_->server.workers; ++slot) spawn(slot);
    restart_acme_process();
    ready_pending_ = true;
    signal_workers(SIGQUIT, true);
    log::info("reloaded: {} new workers, old ones draining", config_->server.workers);
}

void Master::begin_shutdown() {
    log::info("shutting down: draining workers for up to {} ms",
              config_->server.shutdown_timeout.count());
    stopping_ = true;
    ready_pending_ = false;
    service_notify::stopping("stopping: draining " + std::to_string(workers_.size()) + " workers");
    stop_deadline_ms_ = monotonic_ms() + config_->server.shutdown_timeout.count();
    signal_workers(SIGQUIT);
    if (acme_pid_ > 0) ::kill(acme_pid_, SIGTERM);
    // New clients are refused from now on rather than left waiting in a
    // queue nobody will accept from.
    sockets_.clear();
}

bool Master::workers_left() const { return !workers_.empty(); }

// What workers need from root before they start: the log files they will
// write (and reopen) made theirs. Nothing when they do not switch users.
void Master::prepare_for_workers(const config::Config& config) {
    warn_if_user_ignored(config.server);
    if (const config::RunAsUser* user = worker_user(config.server))
        hand_log_files_to(config.log, *user);
}

void Master::read_ready_reports() {
    pid_t pid;
    while (::read(ready_read_.get(), &pid, sizeof pid) == static_cast<ssize_t>(sizeof pid))
        for (WorkerProcess& worker : workers_)
            if (worker.pid == pid) worker.accepting = true;
    notify_ready_once_accepting();
}

// Each slot's socket is served by its own worker only, so "ready" waits for
// every worker of the generation, not the first one.
void Master::notify_ready_once_accepting() {
    if (!ready_pending_) return;
    unsigned accepting = 0;
    for (const WorkerProcess& worker : workers_)
        if (worker.generation == generation_ && !worker.draining && worker.accepting) ++accepting;
    if (accepting < config_->server.workers) return;
    ready_pending_ = false;
    std::string addresses;
    for (const config::SocketAddress& address : config_->server.listen)
        addresses += (addresses.empty() ? "" : ", ") + address.text;
    service_notify::ready(std::to_string(accepting) + " workers accepting on " + addresses);
}

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
        metrics_ = AdminEndpoint();
        return true;
    }
    if (metrics_.fd() >= 0 && metrics_.address() == config.metrics->listen.text) return true;
    AdminEndpoint endpoint;
    std::string error;
    if (!endpoint.open(config.metrics->listen, error)) {
        log::error("{}", error);
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
