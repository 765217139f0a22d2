// A one-shot timeout that is cheap to move, for timeouts re-armed on every
// request or read (header, keep-alive, read and send timeouts): arm() only
// records the new deadline, and the timer's place among the poller's is
// changed only when that deadline is earlier than the one it is set for. A
// timer that comes due before the (moved) deadline sets itself again for
// the rest. Most re-arms thus cost two stores.
//
// Why the IoPoller's timers and not libuv's: a uv_timer_t must be closed
// through libuv (uv_close) before its memory goes, so every connection that
// ended made libuv run once more for its close callback, and a libuv run
// costs an epoll_wait of its own: one system call more per connection
// closed (a client without keep-alive, an upstream connection without it).
// These need nothing at the end but cancel().
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace portico::core {

class IoPoller;

class LazyTimer {
public:
    using Callback = void (*)(void* owner);

    void init(IoPoller& poller, void* owner, Callback callback);
    void arm(uint64_t timeout_ms);
    void disarm() { deadline_ = 0; }
    // Out of the poller for good, before the owner's memory goes.
    void cancel();

private:
    friend class TimerHeap;
    static constexpr size_t not_scheduled = SIZE_MAX;

    IoPoller* poller_ = nullptr;
    void* owner_ = nullptr;
    Callback callback_ = nullptr;  // nullptr once cancelled
    uint64_t deadline_ = 0;  // loop time (ms) it must fire at; 0 when disarmed
    uint64_t due_ = 0;       // loop time it is scheduled for, while scheduled
    size_t place_ = not_scheduled;  // index in the heap
};

// The poller's timers, nearest first: a binary heap of timers that each know
// their place in it, so a timer moved earlier or cancelled costs a sift, not
// a search.
class TimerHeap {
public:
    // Schedules `timer` for `due`, or moves it there (never later).
    void schedule(LazyTimer& timer, uint64_t due);
    void remove(LazyTimer& timer);
    // Milliseconds from `now` until the nearest is due (0: due already);
    // -1 when none is scheduled.
    int timeout(uint64_t now) const;
    // Fires what is due at `now`. A timer set again from a callback for now
    // fires on the next turn, not in this loop.
    void run_due(uint64_t now);

private:
    void put(size_t place, LazyTimer* timer);
    void sift_up(size_t place);
    void sift_down(size_t place);

    std::vector<LazyTimer*> heap_;
    std::vector<LazyTimer*> firing_;
};

}  // namespace portico::core
