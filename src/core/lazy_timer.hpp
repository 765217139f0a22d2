// A one-shot timeout that is cheap to move, for timeouts re-armed on every
// request or read (header, keep-alive, read and send timeouts): arm() only
// records the new deadline, and the libuv timer is restarted only when that
// deadline is earlier than the one it is set for. A timer that fires before
// the (moved) deadline sets itself again for the rest. Most re-arms thus
// cost two stores instead of a heap removal and insertion.
#pragma once

#include <uv.h>

#include <cstddef>
#include <cstdint>

namespace portico::core {

class LazyTimer {
public:
    using Callback = void (*)(void* owner);

    // `owner` goes to the callback and stays in the handle's data, so close
    // callbacks find their object as with a plain uv_timer_t.
    void init(uv_loop_t* loop, void* owner, Callback callback);
    void arm(uint64_t timeout_ms);
    void disarm() { deadline_ = 0; }
    uv_handle_t* handle() { return reinterpret_cast<uv_handle_t*>(&timer_); }

private:
    static void on_timer(uv_timer_t* handle);
    uv_timer_t timer_;  // first: on_timer finds the LazyTimer from the handle
    uint64_t deadline_ = 0;  // loop time (ms) it must fire at; 0 when disarmed
    uint64_t due_ = 0;       // loop time the libuv timer is set for; 0 when stopped
    Callback callback_ = nullptr;
};

}  // namespace portico::core
