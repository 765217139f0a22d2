#include "worker/worker.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <memory>

#include <spdlog/spdlog.h>

#include "core/log.hpp"
#include "http/connection.hpp"
#include "http/server_context.hpp"

namespace portico::worker {

namespace {

class Worker {
public:
    Worker(const config::Config& config, unsigned slot, const std::vector<int>& listen_fds,
           metrics::WorkerCounters counters);
    int run();

private:
    struct Listener {
        Worker* worker;
        int fd;
        uv_poll_t poll;
    };

    static void on_acceptable(uv_poll_t* handle, int status, int events);
    static void on_signal(uv_signal_t* handle, int signum);
    void accept_from(Listener& listener);
    void set_accepting(bool accepting);
    void start_drain();
    void on_connection_closed();
    void stop_loop();

    const config::Config& config_;
    unsigned slot_;
    uv_loop_t loop_;
    std::unique_ptr<http::ServerContext> server_;
    std::vector<std::unique_ptr<Listener>> listeners_;
    uv_signal_t drain_signal_;
    uv_signal_t terminate_signal_;
    uv_signal_t reopen_signal_;
    uv_timer_t accept_retry_;
    bool accepting_ = false;
    bool stopped_ = false;
};

// At most this many accepts per wake-up, so a burst of new connections does
// not starve the ones already open.
constexpr int accepts_per_wakeup = 64;

Worker::Worker(const config::Config& config, unsigned slot, const std::vector<int>& listen_fds,
               metrics::WorkerCounters counters)
    : config_(config), slot_(slot) {
    uv_loop_init(&loop_);
    server_ = std::make_unique<http::ServerContext>(&loop_, config, std::move(counters), slot);
    server_->on_connection_closed = [this] { on_connection_closed(); };
    for (int fd : listen_fds) {
        auto listener = std::make_unique<Listener>();
        listener->worker = this;
        listener->fd = fd;
        uv_poll_init(&loop_, &listener->poll, fd);
        listener->poll.data = listener.get();
        listeners_.push_back(std::move(listener));
    }
    uv_signal_init(&loop_, &drain_signal_);
    uv_signal_init(&loop_, &terminate_signal_);
    uv_signal_init(&loop_, &reopen_signal_);
    drain_signal_.data = terminate_signal_.data = reopen_signal_.data = this;
    uv_signal_start(&drain_signal_, on_signal, SIGQUIT);
    uv_signal_start(&terminate_signal_, on_signal, SIGTERM);
    uv_signal_start(&reopen_signal_, on_signal, SIGUSR1);
    uv_timer_init(&loop_, &accept_retry_);
    accept_retry_.data = this;
}

int Worker::run() {
    spdlog::info("worker {} started (pid {})", slot_, getpid());
    set_accepting(true);
    uv_run(&loop_, UV_RUN_DEFAULT);
    // Every handle is closed by now; the loop owns nothing more.
    uv_loop_close(&loop_);
    spdlog::info("worker {} exiting", slot_);
    return 0;
}

void Worker::set_accepting(bool accepting) {
    if (accepting == accepting_ || server_->draining) return;
    accepting_ = accepting;
    for (auto& listener : listeners_) {
        if (accepting) uv_poll_start(&listener->poll, UV_READABLE, on_acceptable);
        else uv_poll_stop(&listener->poll);
    }
}

void Worker::on_acceptable(uv_poll_t* handle, int status, int) {
    auto* listener = static_cast<Listener*>(handle->data);
    if (status < 0) {
        spdlog::error("listening socket error: {}", uv_strerror(status));
        return;
    }
    listener->worker->accept_from(*listener);
}

void Worker::accept_from(Listener& listener) {
    for (int i = 0; i < accepts_per_wakeup; ++i) {
        if (server_->connection_count >= config_.server.max_connections) {
            // Resumed when a connection closes; the kernel queues the rest.
            set_accepting(false);
            return;
        }
        http::PeerAddress peer{};
        socklen_t peer_length = sizeof peer;
        int fd = ::accept4(listener.fd, &peer.any, &peer_length, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED) return;
            if (errno == EMFILE || errno == ENFILE) {
                spdlog::error("accept: {}; pausing accepts for 100ms (raise the open-file limit "
                              "or lower max_connections)", std::strerror(errno));
                set_accepting(false);
                uv_timer_start(&accept_retry_, [](uv_timer_t* timer) {
                    static_cast<Worker*>(timer->data)->set_accepting(true);
                }, 100, 0);
                return;
            }
            spdlog::error("accept: {}", std::strerror(errno));
            return;
        }
        // Responses leave in one writev; nothing gains from Nagle's delay.
        int on = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
        server_->counters.connection_accepted();
        http::ClientConnection::start(*server_, fd, peer);
    }
}

void Worker::on_signal(uv_signal_t* handle, int signum) {
    auto* worker = static_cast<Worker*>(handle->data);
    if (signum == SIGUSR1) {
        core::open_error_log(worker->config_.log, "worker " + std::to_string(worker->slot_));
        worker->server_->access_log.reopen();
        return;
    }
    worker->start_drain();
}

void Worker::start_drain() {
    if (server_->draining) return;
    spdlog::info("worker {} draining: {} open connections", slot_, server_->connection_count);
    set_accepting(false);
    server_->draining = true;
    // Our copies of the listening sockets go; the master keeps them open, so
    // connections waiting in the accept queues go to the next worker.
    for (auto& listener : listeners_) {
        uv_close(reinterpret_cast<uv_handle_t*>(&listener->poll), nullptr);
        ::close(listener->fd);
    }
    for (auto& upstream : server_->upstreams) upstream->close_idle();
    for (http::ClientConnection* connection = server_->connections; connection;) {
        http::ClientConnection* next = connection->next;
        connection->close_if_idle();
        connection = next;
    }
    if (server_->connection_count == 0) stop_loop();
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
    server_->poller.close();
    for (auto& upstream : server_->upstreams) upstream->close();
}

}  // namespace

int run_worker(const config::Config& config, unsigned slot, const std::vector<int>& listen_fds,
               metrics::SharedCounters& counters, unsigned counter_slot, pid_t master) {
    // A master that dies unexpectedly must not leave workers serving alone:
    // they drain and exit. (A master that died before the prctl: at once.)
    prctl(PR_SET_PDEATHSIG, SIGQUIT);
    if (getppid() != master) return 1;
    // Ctrl-C reaches the whole process group: the master decides for us.
    signal(SIGINT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    core::open_error_log(config.log, "worker " + std::to_string(slot));
    Worker worker(config, slot, listen_fds, counters.attach(counter_slot, config));
    return worker.run();
}

}  // namespace portico::worker
