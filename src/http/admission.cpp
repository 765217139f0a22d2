#include "http/admission.hpp"

#include "core/io_poller.hpp"

namespace portico::http {

Waiting& Admission::hold() {
    if (held_ == nullptr) held_ = &pool_.acquire();
    hold_asked_ = true;
    return *held_;
}

void AdmissionGate::settle(size_t next, AdmissionVerdict verdict, Exchange& exchange,
                           Admission& admission, Waiting* waiting) {
    if (verdict == AdmissionVerdict::answered) {
        if (waiting != nullptr) waiting->done();
        return;
    }
    if (waiting == nullptr) {
        waiting = admission.held_ != nullptr ? admission.held_ : &pool_.acquire();
        exchange.hold_request_body();
    }
    waiting->gate_ = this;
    waiting->exchange_ = &exchange;
    waiting->next_check_ = next;
    waiting->held_ = admission.hold_asked_;
    if (!admission.hold_asked_) waiting->timer_.arm(admission.wait_ms_);
    exchange.set_listener(waiting);
}

void AdmissionGate::serve_after_waiting(Exchange& exchange, Waiting& waiting) {
    waiting.done();
    // A request whose body is all in (its location's handlers wait for it)
    // may end inside the content: the hold goes first. Otherwise the
    // handler that listens resumes the body itself, and one that answers
    // leaves the rest to the codec.
    if (!serving_.streams_body) exchange.resume_request_body();
    serve_handlers(serving_.handlers, exchange);
}

// ---- Waiting ---------------------------------------------------------------

void Waiting::on_timer(void* waiting) {
    auto* self = static_cast<Waiting*>(waiting);
    self->gate_->run_from(self->next_check_, *self->exchange_, self);
}

void Waiting::pass() {
    held_ = false;
    if (gone_) {
        done();
        return;
    }
    gate_->run_from(next_check_, *exchange_, this);
}

Exchange* Waiting::answer() {
    held_ = false;
    if (gone_) {
        done();
        return nullptr;
    }
    Exchange* exchange = exchange_;
    exchange->set_listener(nullptr);
    done();
    return exchange;
}

void Waiting::on_client_gone() {
    gone_ = true;
    timer_.disarm();
    if (!held_) done();
}

void Waiting::done() {
    timer_.disarm();
    exchange_ = nullptr;
    gate_ = nullptr;
    gone_ = false;
    held_ = false;
    pool_->release(*this);
}

// ---- WaitingPool -----------------------------------------------------------

WaitingPool::~WaitingPool() {
    for (std::unique_ptr<Waiting>& waiting : all_) waiting->timer_.cancel();
}

Waiting& WaitingPool::acquire() {
    if (free_.empty()) {
        all_.push_back(std::make_unique<Waiting>());
        Waiting& waiting = *all_.back();
        waiting.pool_ = this;
        waiting.timer_.init(poller_, &waiting, Waiting::on_timer);
        free_.push_back(&waiting);
    }
    Waiting* waiting = free_.back();
    free_.pop_back();
    return *waiting;
}

void WaitingPool::release(Waiting& waiting) {
    free_.push_back(&waiting);
}

}  // namespace portico::http
