#include "core/lazy_timer.hpp"

#include <algorithm>
#include <climits>

#include "core/io_poller.hpp"

namespace portico::core {

void LazyTimer::init(IoPoller& poller, void* owner, Callback callback) {
    poller_ = &poller;
    owner_ = owner;
    callback_ = callback;
}

void LazyTimer::arm(uint64_t timeout_ms) {
    if (callback_ == nullptr) return;
    deadline_ = poller_->now_ms() + timeout_ms;
    if (place_ != not_scheduled && due_ <= deadline_) return;  // comes due first, then re-arms
    poller_->timers().schedule(*this, deadline_);
}

void LazyTimer::cancel() {
    if (poller_ == nullptr) return;
    callback_ = nullptr;
    deadline_ = 0;
    poller_->timers().remove(*this);
}

void TimerHeap::put(size_t place, LazyTimer* timer) {
    heap_[place] = timer;
    timer->place_ = place;
}

void TimerHeap::sift_up(size_t place) {
    LazyTimer* timer = heap_[place];
    while (place > 0) {
        size_t parent = (place - 1) / 2;
        if (heap_[parent]->due_ <= timer->due_) break;
        put(place, heap_[parent]);
        place = parent;
    }
    put(place, timer);
}

void TimerHeap::sift_down(size_t place) {
    LazyTimer* timer = heap_[place];
    for (;;) {
        size_t child = 2 * place + 1;
        if (child >= heap_.size()) break;
        if (child + 1 < heap_.size() && heap_[child + 1]->due_ < heap_[child]->due_) ++child;
        if (timer->due_ <= heap_[child]->due_) break;
        put(place, heap_[child]);
        place = child;
    }
    put(place, timer);
}

void TimerHeap::schedule(LazyTimer& timer, uint64_t due) {
    timer.due_ = due;
    if (timer.place_ == LazyTimer::not_scheduled) {
        heap_.push_back(&timer);
        timer.place_ = heap_.size() - 1;
    }
    sift_up(timer.place_);  // only ever earlier: arm() keeps a nearer due
}

void TimerHeap::remove(LazyTimer& timer) {
    if (timer.place_ == LazyTimer::not_scheduled) {
        // Taken out to fire in this turn, and cancelled by an earlier one's
        // callback (a connection closed by another's timeout).
        if (!firing_.empty()) std::replace(firing_.begin(), firing_.end(), &timer, static_cast<LazyTimer*>(nullptr));
        return;
    }
    size_t place = timer.place_;
    timer.place_ = LazyTimer::not_scheduled;
    LazyTimer* last = heap_.back();
    heap_.pop_back();
    if (last == &timer) return;
    put(place, last);
    sift_up(place);
    sift_down(last->place_);
}

int TimerHeap::timeout(uint64_t now) const {
    if (heap_.empty()) return -1;
    uint64_t due = heap_.front()->due_;
    if (due <= now) return 0;
    return static_cast<int>(std::min<uint64_t>(due - now, INT_MAX));
}

void TimerHeap::run_due(uint64_t now) {
    while (!heap_.empty() && heap_.front()->due_ <= now) {
        LazyTimer* timer = heap_.front();
        remove(*timer);
        firing_.push_back(timer);
    }
    for (size_t i = 0; i < firing_.size(); ++i) {
        LazyTimer* timer = firing_[i];
        // Cancelled, or set again, by an earlier callback of this batch.
        if (timer == nullptr || timer->place_ != LazyTimer::not_scheduled || timer->deadline_ == 0) continue;
        if (now < timer->deadline_) {
            schedule(*timer, timer->deadline_);  // moved on since: the rest of its time
            continue;
        }
        timer->deadline_ = 0;
        timer->callback_(timer->owner_);
    }
    firing_.clear();
}

}  // namespace portico::core
