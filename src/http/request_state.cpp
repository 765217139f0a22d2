#include "http/request_state.hpp"

namespace portico::http {

RequestStatePool::~RequestStatePool() {
    for (RequestState* state : free_) delete state;
}

RequestState* RequestStatePool::acquire(RequestParser::BodyReceiver& receiver) {
    RequestState* state;
    if (free_.empty()) {
        state = new RequestState();
    } else {
        state = free_.back();
        free_.pop_back();
    }
    state->reset(receiver);
    return state;
}

void RequestStatePool::release(RequestState* state) {
    if (state == nullptr) return;
    state->body_owner.reset();
    state->listener = nullptr;
    if (free_.size() >= 1024) {
        delete state;
        return;
    }
    free_.push_back(state);
}

}  // namespace portico::http
