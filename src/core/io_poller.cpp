#include "core/io_poller.hpp"

#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include <spdlog/spdlog.h>

namespace portico::core {

namespace {

// Events taken per epoll_wait; more stay ready and come next loop turn.
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
    uv_poll_init(loop, &poll_, epoll_fd_);
    poll_.data = this;
    uv_poll_start(&poll_, UV_READABLE, on_ready);
    uv_idle_init(loop, &idle_);
    idle_.data = this;
}

IoPoller::~IoPoller() { ::close(epoll_fd_); }

void IoPoller::close() {
    if (closed_) return;
    closed_ = true;
    uv_close(reinterpret_cast<uv_handle_t*>(&poll_), nullptr);
    uv_close(reinterpret_cast<uv_handle_t*>(&idle_), nullptr);
}

void IoPoller::on_idle(uv_idle_t* handle) {
    auto* poller = static_cast<IoPoller*>(handle->data);
    std::vector<IoWatcher*> due;
    due.swap(poller->soon_);
    uv_idle_stop(handle);
    for (IoWatcher* watcher : due) {
        // Taken out of the list first: the callback may ask again.
        int events = std::exchange(watcher->soon_events_, 0);
        if (watcher->callback_ == nullptr) continue;
        events &= watcher->events_;
        if (events != 0) watcher->callback_(watcher->owner_, events);
    }
}

void IoPoller::on_ready(uv_poll_t* handle, int status, int) {
    auto* poller = static_cast<IoPoller*>(handle->data);
    if (status < 0) {
        spdlog::error("socket poller: {}", uv_strerror(status));
        return;
    }
    poller->dispatch();
}

void IoPoller::dispatch() {
    epoll_event ready[events_per_turn];
    int count = ::epoll_wait(epoll_fd_, ready, events_per_turn, 0);
    bool any_first = false;
    for (int i = 0; i < count; ++i) {
        auto* watcher = static_cast<IoWatcher*>(ready[i].data.ptr);
        if (!watcher->first_) continue;
        any_first = true;
        report(*watcher, ready[i].events);
    }
    for (int i = 0; i < count; ++i) {
        auto* watcher = static_cast<IoWatcher*>(ready[i].data.ptr);
        if (any_first && watcher->first_) continue;
        report(*watcher, ready[i].events);
    }
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
    if (soon_events_ == 0) {
        if (poller_->soon_.empty()) uv_idle_start(&poller_->idle_, IoPoller::on_idle);
        poller_->soon_.push_back(this);
    }
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
