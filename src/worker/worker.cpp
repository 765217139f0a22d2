#include "worker/worker.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include <cerrno>
#include <csignal>
#include <algorithm>
#include <cstring>
#include <memory>

#include "core/log.hpp"
#include "http/server_context.hpp"
#include "tls/tls_transport.hpp"
#include "worker/composition.hpp"
#include "worker/error_log.hpp"
#include "worker/protocol_choice.hpp"
#include "worker/proxy_header_read.hpp"
#include "worker/run_as_user.hpp"

namespace portico::worker {

namespace {

class Worker {
public:
    Worker(const config::Config& config, const Inherited& inherited, unsigned slot,
           const std::vector<ListenFd>& listen_fds, metrics::WorkerCounters counters,
           const sigset_t& held_signals);
    int run(int ready_fd);

private:
    struct Listener {
        Worker* worker;
        int fd;
        bool tls;
        bool proxy_protocol;
        uint16_t index;  // config::listeners_of's
        uint16_t port;   // as bound
        core::IoWatcher watcher;
    };

    static void on_acceptable(void* listener, int events);
    static void on_signal(uv_signal_t* handle, int signum);
    void accept_from(Listener& listener);
    void set_accepting(bool accepting);
    void start_drain();
    void close_idle_connections();
    void on_connection_closed();
    void stop_loop();

    const config::Config& config_;
    unsigned slot_;
    uv_loop_t loop_;
    std::unique_ptr<http::ServerContext> server_;
    std::unique_ptr<Composition> composition_;  // what server_ serves with
    std::unique_ptr<tls::WorkerTls> tls_;       // with a [tls] section
    std::vector<std::unique_ptr<Listener>> listeners_;
    uv_signal_t drain_signal_;
    uv_signal_t terminate_signal_;
    uv_signal_t reopen_signal_;
    uv_timer_t accept_retry_;
    uv_timer_t drain_grace_;
    bool accepting_ = false;
    bool stopped_ = false;
};

// The port a listening socket is bound to; 0 when it cannot be told.
uint16_t bound_port(int fd) {
    sockaddr_storage bound{};
    socklen_t length = sizeof bound;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) != 0) return 0;
    return ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6&>(bound).sin6_port
                                             : reinterpret_cast<sockaddr_in&>(bound).sin_port);
}

// The port redirect_http sends clients to: the first TLS listener's, as bound.
uint16_t https_port(const std::vector<ListenFd>& listen_fds) {
    for (const ListenFd& socket : listen_fds) {
        if (!socket.tls) continue;
        uint16_t port = bound_port(socket.fd);
        return port != 0 ? port : 443;
    }
    return 443;
}

// At most this many accepts per wake-up, so a burst of new connections does
// not starve the ones already open.
constexpr int accepts_per_wakeup = 64;

Worker::Worker(const config::Config& config, const Inherited& inherited, unsigned slot,
               const std::vector<ListenFd>& listen_fds, metrics::WorkerCounters counters,
               const sigset_t& held_signals)
    : config_(config), slot_(slot) {
    uv_loop_init(&loop_);
    server_ = std::make_unique<http::ServerContext>(&loop_, config, std::move(counters), slot);
    server_->on_connection_closed = [this] { on_connection_closed(); };
    composition_ = std::make_unique<Composition>(*server_, https_port(listen_fds), inherited.limits,
                                                 &inherited.upstream_tls, inherited.acme_board,
                                                 &inherited.caches);
    if (inherited.tls) tls_ = std::make_unique<tls::WorkerTls>(*inherited.tls, server_->counters);
    for (const ListenFd& socket : listen_fds) {
        auto listener = std::make_unique<Listener>();
        listener->worker = this;
        listener->fd = socket.fd;
        listener->tls = socket.tls;
        listener->proxy_protocol = socket.proxy_protocol;
        listener->index = static_cast<uint16_t>(socket.listener);
        listener->port = bound_port(socket.fd);
        listener->watcher.init(server_->poller, socket.fd, listener.get(), on_acceptable);
        listeners_.push_back(std::move(listener));
    }
    uv_signal_init(&loop_, &drain_signal_);
    uv_signal_init(&loop_, &terminate_signal_);
    uv_signal_init(&loop_, &reopen_signal_);
    drain_signal_.data = terminate_signal_.data = reopen_signal_.data = this;
    uv_signal_start(&drain_signal_, on_signal, SIGQUIT);
    uv_signal_start(&terminate_signal_, on_signal, SIGTERM);
    uv_signal_start(&reopen_signal_, on_signal, SIGUSR1);
    // Held since the fork (see Master::spawn): a SIGUSR1 sent while this
    // worker started is delivered now and reopens the logs at the loop's
    // first turn, rather than having killed the worker.
    pthread_sigmask(SIG_UNBLOCK, &held_signals, nullptr);
    uv_timer_init(&loop_, &accept_retry_);
    accept_retry_.data = this;
    uv_timer_init(&loop_, &drain_grace_);
    drain_grace_.data = this;
}

// The master counts a worker as serving (and tells systemd READY=1 when all
// are) from this message, not from the fork: a worker can still fail
// between the two, switching users for one.
void report_accepting(int ready_fd) {
    pid_t pid = getpid();
    if (::write(ready_fd, &pid, sizeof pid) != static_cast<ssize_t>(sizeof pid))
        log::warn("cannot tell the master this worker accepts: {}", std::strerror(errno));
    ::close(ready_fd);
}

int Worker::run(int ready_fd) {
    log::info("started (pid {})", getpid());
    set_accepting(true);
    report_accepting(ready_fd);
    server_->poller.run();
    // Every handle is closed by now; the loop owns nothing more.
    uv_loop_close(&loop_);
    log::info("exiting");
    return 0;
}

void Worker::set_accepting(bool accepting) {
    if (accepting == accepting_ || server_->draining) return;
    accepting_ = accepting;
    for (auto& listener : listeners_) {
        if (!listener->watcher.watch(accepting ? core::io_readable : 0))
            log::error("cannot watch a listening socket: {}", std::strerror(errno));
    }
}

void Worker::on_acceptable(void* listener, int) {
    auto& accepting = *static_cast<Listener*>(listener);
    accepting.worker->accept_from(accepting);
}

void Worker::accept_from(Listener& listener) {
    struct Accepted {
        int fd;
        http::PeerAddress peer;
    };
    Accepted accepted[accepts_per_wakeup];
    int count = 0;
    while (count < accepts_per_wakeup) {
        if (server_->connection_count + count >= config_.server.max_connections) {
            // Resumed when a connection closes; the kernel queues the rest.
            set_accepting(false);
            break;
        }
        Accepted& next = accepted[count];
        socklen_t peer_length = sizeof next.peer;
        next.fd = ::accept4(listener.fd, &next.peer.any, &peer_length, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (next.fd >= 0) {
            ++count;
            continue;
        }
        if (errno == EMFILE || errno == ENFILE) {
            log::error(
                "accept: {}; pausing accepts for 100ms (raise the open-file limit "
                "or lower max_connections)",
                std::strerror(errno));
            set_accepting(false);
            uv_timer_start(&accept_retry_, [](uv_timer_t* timer) {
                static_cast<Worker*>(timer->data)->set_accepting(true);
            }, 100, 0);
        } else if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED) {
            log::error("accept: {}", std::strerror(errno));
        }
        break;
    }
    if (count == 0) return;
    // Accepted first, served after: a file changed before any of these
    // clients sent its request is known stale by now.
    composition_->file_cache().read_pending_changes();
    for (int i = 0; i < count; ++i) {
        // Responses leave in one writev; nothing gains from Nagle's delay.
        int on = 1;
        ::setsockopt(accepted[i].fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
        server_->counters.connection_accepted();
        std::unique_ptr<transport::Transport> transport =
            listener.tls ? tls_->accept(accepted[i].fd, listener.index)
                         : std::make_unique<transport::Socket>(accepted[i].fd);
        if (transport == nullptr) {
            server_->counters.connection_closed();
            continue;
        }
        transport->listener = listener.index;
        transport->local_port = listener.port;
        if (listener.proxy_protocol)
            ProxyHeaderRead::start(*server_, std::move(transport), accepted[i].peer);
        else
            ProtocolChoice::start(*server_, std::move(transport), accepted[i].peer);
    }
}

void Worker::on_signal(uv_signal_t* handle, int signum) {
    auto* worker = static_cast<Worker*>(handle->data);
    if (signum == SIGUSR1) {
        open_error_log(worker->config_.log, "worker " + std::to_string(worker->slot_));
        worker->server_->access_log.reopen();
        log::info("log files reopened");
        return;
    }
    worker->start_drain();
}

// How long a draining worker keeps idle kept-alive connections open.
constexpr int64_t max_drain_grace_ms = 5000;

void Worker::start_drain() {
    if (server_->draining) return;
    log::info("draining: {} open connections", server_->connection_count);
    set_accepting(false);
    server_->draining = true;
    // Our copies of the listening sockets go; the master keeps them open, so
    // connections waiting in the accept queues go to the next worker.
    for (auto& listener : listeners_) {
        // set_accepting(false) took it out of the epoll set, as it must be by
        // hand: the master's copy of the descriptor would keep it there.
        listener->watcher.forget();
        ::close(listener->fd);
    }
    for (auto& upstream : composition_->upstreams()) upstream->close_idle();
    // HTTP/2 clients hear it at once (GOAWAY): they open no more streams
    // here, and each connection closes when its open streams are done.
    for (http::OpenConnection* connection = server_->connections; connection;) {
        http::OpenConnection* next = connection->next;
        connection->announce_drain();
        connection = next;
    }
    // HTTP/1.1: Envoy's drain, not nginx's: an idle kept-alive connection is not
    // closed at once, since its client's next request may already be on
    // its way and would meet a closed socket (a failed request, or a reset).
    // For the grace period (keepalive_timeout, at most 5 s) that next
    // request is answered, with "Connection: close"; the connections still
    // idle when it ends are closed then.
    int64_t grace = std::min<int64_t>(config_.server.keepalive_timeout.count(), max_drain_grace_ms);
    if (grace > 0) {
        uv_timer_start(&drain_grace_, [](uv_timer_t* timer) {
            static_cast<Worker*>(timer->data)->close_idle_connections();
        }, static_cast<uint64_t>(grace), 0);
    } else {
        close_idle_connections();
    }
    if (server_->connection_count == 0) stop_loop();
}

void Worker::close_idle_connections() {
    for (http::OpenConnection* connection = server_->connections; connection;) {
        http::OpenConnection* next = connection->next;
        connection->close_if_idle();
        connection = next;
    }
}

void Worker::on_connection_closed() {
    if (server_->draining) {
        if (server_->connection_count == 0) stop_loop();
        return;
    }
    if (server_->connection_count < config_.server.max_connections) set_accepting(true);
}

void Worker::stop_loop() {
    if (stopped_) return;
    stopped_ = true;
    uv_close(reinterpret_cast<uv_handle_t*>(&drain_signal_), nullptr);
    uv_close(reinterpret_cast<uv_handle_t*>(&terminate_signal_), nullptr);
    uv_close(reinterpret_cast<uv_handle_t*>(&reopen_signal_), nullptr);
    uv_close(reinterpret_cast<uv_handle_t*>(&accept_retry_), nullptr);
    uv_close(reinterpret_cast<uv_handle_t*>(&drain_grace_), nullptr);
    server_->poller.close();
    for (auto& upstream : composition_->upstreams()) upstream->close();
}

// Only when the config names a policy: then it holds whatever the master
// was started under. Unprivileged: SCHED_BATCH and SCHED_OTHER need no
// capability. A refusal (a seccomp profile, say) costs only the measured
// gain, so it is logged and the worker serves on.
void apply_scheduling(std::optional<config::WorkerScheduling> scheduling) {
    if (!scheduling) return;
    bool batch = *scheduling == config::WorkerScheduling::batch;
    sched_param no_priority{};
    if (sched_setscheduler(0, batch ? SCHED_BATCH : SCHED_OTHER, &no_priority) != 0)
        log::warn(
            "worker_scheduling = \"{}\": sched_setscheduler refused ({}); the worker keeps "
            "the policy it was started with",
            batch ? "batch" : "normal", std::strerror(errno));
}

}  // namespace

int run_worker(const config::Config& config, const Inherited& inherited, unsigned slot,
               const std::vector<ListenFd>& listen_fds, metrics::SharedCounters& counters,
               unsigned counter_slot, pid_t master, int ready_fd, const sigset_t& held_signals) {
    // Ctrl-C reaches the whole process group: the master decides for us.
    signal(SIGINT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    std::string role = "worker " + std::to_string(slot);
    open_error_log(config.log, role);
    if (const config::RunAsUser* user = worker_user(config.server)) {
        std::string error;
        if (!switch_to_user(*user, error)) {
            log::critical("cannot switch to user {}: {}; exiting rather than serving as root",
                          user->name, error);
            return 1;
        }
        // Opened again as the user: a log file it cannot write shows now,
        // not at the first logrotate.
        open_error_log(config.log, role);
    }
    // A master that dies unexpectedly must not leave workers serving alone:
    // they drain and exit. (A master that died before the prctl: at once.)
    // After the switch, since changing ids clears the parent-death signal.
    prctl(PR_SET_PDEATHSIG, SIGQUIT);
    if (getppid() != master) return 1;
    apply_scheduling(config.server.worker_scheduling);
    Worker worker(config, inherited, slot, listen_fds, counters.attach(counter_slot, config),
                  held_signals);
    return worker.run(ready_fd);
}

}  // namespace portico::worker

