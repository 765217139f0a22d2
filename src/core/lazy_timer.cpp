#include "core/lazy_timer.hpp"

namespace portico::core {

void LazyTimer::init(uv_loop_t* loop, void* owner, Callback callback) {
    uv_timer_init(loop, &timer_);
    timer_.data = owner;
    callback_ = callback;
}

void LazyTimer::arm(uint64_t timeout_ms) {
    uint64_t now = uv_now(timer_.loop);
    deadline_ = now + timeout_ms;
    if (due_ != 0 && due_ <= deadline_) return;  // fires first, then re-arms for the rest
    uv_timer_start(&timer_, on_timer, timeout_ms, 0);
    due_ = deadline_;
}

void LazyTimer::on_timer(uv_timer_t* handle) {
    LazyTimer* self = reinterpret_cast<LazyTimer*>(handle);
    self->due_ = 0;
    if (self->deadline_ == 0) return;
    uint64_t now = uv_now(handle->loop);
    if (now < self->deadline_) {
        uv_timer_start(handle, on_timer, self->deadline_ - now, 0);
        self->due_ = self->deadline_;
        return;
    }
    self->deadline_ = 0;
    self->callback_(handle->data);
}

}  // namespace portico::core
