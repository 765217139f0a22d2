#include "http1/codec_state.hpp"

namespace portico::http1 {

CodecStatePool::~CodecStatePool() {
    for (CodecState* state : free_) delete state;
}

CodecState* CodecStatePool::acquire(RequestParser::BodyReceiver& receiver) {
    CodecState* state;
    if (free_.empty()) {
        state = new CodecState();
    } else {
        state = free_.back();
        free_.pop_back();
    }
    state->reset(receiver);
    return state;
}

void CodecStatePool::release(CodecState* state) {
    if (state == nullptr) return;
    state->body_owner.reset();
    state->listener = nullptr;
    if (free_.size() >= 1024) {
        delete state;
        return;
    }
    free_.push_back(state);
}

CodecStatePool& codec_state_pool() {
    thread_local CodecStatePool pool;
    return pool;
}

}  // namespace portico::http1
