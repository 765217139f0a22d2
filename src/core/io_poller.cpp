#include "core/io_poller.hpp"

#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/log.hpp"

namespace portico::core {

namespace {

// Events taken per epoll_wait; more stay ready and come next loop turn.
// nginx's 512 was measured: no fewer calls per response at wrk -c1000
// (tests/bench/results/kernel-experiments.md).
constexpr int events_per_turn = 128;

uint32_t epoll_events_for(int events) {
    uint32_t wanted = 0;
    if (events & io_readable) wanted |= EPOLLIN;
    if (events & io_writable) wanted |= EPOLLOUT;
    return wanted;
}

}  // namespace

IoPoller::IoPoller(uv_loop_t* loop) : loop_(loop), epoll_fd_(::epoll_create1(EPOLL_CLOEXEC)) {
    if (epoll_fd_ < 0)
        throw std::runtime_error(std::string("epoll_create1: ") + std::strerror(errno));
    // libuv's backend is an epoll instance too: readable when it has events.
    // Its entry carries no watcher.
    epoll_event libuv{};
    libuv.events = EPOLLIN;
    libuv.data.ptr = nullptr;
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, uv_backend_fd(loop), &libuv) != 0)
        throw std::runtime_error(std::string("epoll_ctl(libuv's backend): ") + std::strerror(errno));
}

IoPoller::~IoPoller() { ::close(epoll_fd_); }

void IoPoller::run() {
    // libuv puts its handles' descriptors (its signal pipe, its thread
    // pool's wakeup) in its backend inside uv_run: once before the first wait.
    uv_run(loop_, UV_RUN_NOWAIT);
    while (!closed_) turn(-1);
    uv_run(loop_, UV_RUN_DEFAULT);
    run_releases();  // what libuv's last callbacks closed
}

int IoPoller::libuv_timeout() const {
    // A loop with nothing active says 0 ("would end now"): not work to do.
    return uv_loop_alive(loop_) ? uv_backend_timeout(loop_) : -1;
}

void IoPoller::turn(int timeout_ms) {
    auto shorten = [&timeout_ms](int due) {
        if (due >= 0 && (timeout_ms < 0 || due < timeout_ms)) timeout_ms = due;
    };
    if (!soon_.empty()) {
        timeout_ms = 0;
    } else {
        shorten(libuv_timeout());
        shorten(timers_.timeout(now_ms()));
    }
    epoll_event ready[events_per_turn];
    int count = ::epoll_wait(epoll_fd_, ready, events_per_turn, timeout_ms);
    if (count < 0) {
        // EINTR: a signal, which libuv's handler made its backend ready for.
        if (errno != EINTR) log::error("epoll_wait: {}", std::strerror(errno));
        count = 0;
    }
    // The time timers are armed from, as libuv keeps it after its own wait.
    uv_update_time(loop_);
    bool libuv_ready = false;
    bool any_first = false;
    for (int i = 0; i < count; ++i) {
        auto* watcher = static_cast<IoWatcher*>(ready[i].data.ptr);
        if (watcher == nullptr) {
            libuv_ready = true;
        } else if (watcher->first_) {
            any_first = true;
            report(*watcher, ready[i].events);
        }
    }
    for (int i = 0; i < count; ++i) {
        auto* watcher = static_cast<IoWatcher*>(ready[i].data.ptr);
        if (watcher == nullptr || (any_first && watcher->first_)) continue;
        report(*watcher, ready[i].events);
    }
    report_soon_ones();
    timers_.run_due(now_ms());
    // libuv's own timers due and its handles closing count as work too.
    if (libuv_ready || libuv_timeout() == 0) uv_run(loop_, UV_RUN_NOWAIT);
    run_releases();
}

void IoPoller::run_releases() {
    // A release may end more (the last connection closed lets a draining
    // worker close the rest): until none is left.
    while (!releases_.empty()) {
        releasing_.swap(releases_);
        for (const Release& release : releasing_) release.second(release.first);
        releasing_.clear();
    }
}

void IoPoller::report_soon_ones() {
    if (soon_.empty()) return;
    reporting_.swap(soon_);
    for (IoWatcher* watcher : reporting_) {
        // Taken out of the list first: the callback may ask again.
        int events = std::exchange(watcher->soon_events_, 0);
        if (watcher->callback_ == nullptr) continue;
        events &= watcher->events_;
        if (events != 0) watcher->callback_(watcher->owner_, events);
    }
    reporting_.clear();
}

void IoPoller::report(IoWatcher& watcher, uint32_t what) {
    // Forgotten, or changed its mind, since this batch was collected.
    if (watcher.callback_ == nullptr) return;
    int events = 0;
    if (what & (EPOLLERR | EPOLLHUP)) {
        events = watcher.events_;
    } else {
        if (what & EPOLLIN) events |= io_readable;
        if (what & EPOLLOUT) events |= io_writable;
        events &= watcher.events_;
    }
    if (events != 0) watcher.callback_(watcher.owner_, events);
}

void IoWatcher::init(IoPoller& poller, int fd, void* owner, Callback callback) {
    poller_ = &poller;
    fd_ = fd;
    owner_ = owner;
    callback_ = callback;
}

bool IoWatcher::watch(int events) {
    if (callback_ == nullptr || events == events_) return true;
    int result;
    if (events == 0) {
        // Not a MOD to no events: level-triggered epoll would still report
        // a hang-up, again and again, to a watcher that asked for nothing.
        result = ::epoll_ctl(poller_->epoll_fd_, EPOLL_CTL_DEL, fd_, nullptr);
        registered_ = false;
    } else {
        epoll_event wanted{};
        wanted.events = epoll_events_for(events);
        wanted.data.ptr = this;
        result = ::epoll_ctl(poller_->epoll_fd_, registered_ ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd_,
                             &wanted);
        if (result == 0) registered_ = true;  // a failed MOD leaves it in the set
    }
    if (result != 0) return false;
    events_ = events;
    return true;
}

void IoWatcher::report_soon(int events) {
    if (callback_ == nullptr || events == 0) return;
    if (soon_events_ == 0) poller_->soon_.push_back(this);
    soon_events_ |= events;
}

void IoWatcher::forget() {
    callback_ = nullptr;
    events_ = 0;
    if (soon_events_ != 0) {
        std::erase(poller_->soon_, this);
        soon_events_ = 0;
    }
}

}  // namespace portico::core
