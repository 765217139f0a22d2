#include "http/filtered_exchange.hpp"

#include <utility>

#include "http/status.hpp"

namespace portico::http {

// ---- the location's filter: lends its exchanges --------------------------

ResponseFilter::ResponseFilter() = default;
ResponseFilter::~ResponseFilter() = default;

Exchange& ResponseFilter::wrap(Exchange& outer_client) {
    Exchange& client = closer_ ? closer_->wrap(outer_client) : outer_client;
    if (free_.empty()) {
        exchanges_.push_back(std::make_unique<FilteredExchange>(*this, new_stream()));
        free_.push_back(exchanges_.back().get());
    }
    // Taken only when its stream takes the request: a declined request
    // (HEAD, Range for compression) costs this call and start's.
    FilteredExchange* exchange = free_.back();
    if (!exchange->start(client)) return client;
    free_.pop_back();
    return *exchange;
}

void ResponseFilter::unwrap(Exchange& wrapped, Exchange& client) {
    if (&wrapped == &client) return;
    auto& exchange = static_cast<FilteredExchange&>(wrapped);
    exchange.client_ = nullptr;
    exchange.output_done_ = exchange.handler_done_ = true;
    free_.push_back(&exchange);
}

Exchange& ResponseFilter::unwrap_taken(Exchange& wrapped) {
    Exchange& client = *static_cast<FilteredExchange&>(wrapped).client_;
    unwrap(wrapped, client);
    return client;
}

// Every entry point holds one: the exchange goes back to its filter when the
// outermost call returns after both sides are done, never under a caller
// (the connection finishing the request, a pipelined request starting in
// the same call, the filter pumping its output) still using it.
struct FilteredExchange::Guard {
    explicit Guard(FilteredExchange& exchange) : self(exchange) { ++self.depth_; }
    ~Guard() {
        if (--self.depth_ == 0 && self.output_done_ && self.handler_done_ &&
            self.client_ != nullptr) {
            self.client_ = nullptr;
            self.filter_.recycle(self);
        }
    }
    FilteredExchange& self;
};

FilteredExchange::FilteredExchange(ResponseFilter& filter, std::unique_ptr<FilterStream> stream)
    : filter_(filter), stream_(std::move(stream)), output_(*this) {
    stream_->next_ = &output_;
}

bool FilteredExchange::start(Exchange& client) {
    if (!stream_->start(client.request())) return false;
    client_ = &client;
    listener_ = nullptr;
    head_.status = 0;
    head_.length.reset();
    head_.fields.clear();
    input_ = Input::head;
    head_sent_ = false;
    output_done_ = handler_done_ = false;
    filter_listens_ = more_expected_ = false;
    return true;
}

// ---- the handler's calls -------------------------------------------------

void FilteredExchange::begin_response(int status, uint64_t content_length) {
    if (input_ != Input::head) return;
    head_.status = status;
    head_.length = content_length;
}

void FilteredExchange::begin_streamed_response(int status) {
    if (input_ != Input::head) return;
    head_.status = status;
    head_.length.reset();
}

void FilteredExchange::add_header(std::string_view name, std::string_view value) {
    if (output_done_) return;
    // Once the head is out, as the client's exchange would take it.
    if (head_sent_)
        client_->add_header(name, value);
    else
        head_.fields.add(name, value);
}

bool FilteredExchange::open_body() {
    if (input_ == Input::head) {
        input_ = Input::body;
        if (!output_done_) stream_->head(head_);
    }
    return !output_done_;
}

void FilteredExchange::to_filter(BodyPart& part) {
    part.more_expected = std::exchange(more_expected_, false);
    if (part.last) {
        // The handler is done with its exchange (it may be gone already):
        // what the filter still holds is no longer its business.
        handler_done_ = true;
        listener_ = nullptr;
    }
    if (open_body()) stream_->body(part);
}

void FilteredExchange::send_body_pieces(std::span<const std::string_view> pieces, bool last) {
    Guard guard(*this);
    if (input_ == Input::tunnel) {
        if (last) handler_done_ = output_done_ = true;
        client_->send_body_pieces(pieces, last);
        return;
    }
    BodyPart part;
    part.pieces = pieces;
    part.last = last;
    to_filter(part);
}

void FilteredExchange::flush_body() {
    Guard guard(*this);
    if (input_ != Input::body || output_done_) return;
    BodyPart part;
    part.flush = true;
    stream_->body(part);
}

void FilteredExchange::send_owned_body(std::string_view bytes, std::shared_ptr<const void> owner) {
    Guard guard(*this);
    BodyPart part;
    part.kind = BodyPart::Kind::owned;
    part.pieces = {&bytes, 1};
    part.owner = std::move(owner);
    to_filter(part);
}

void FilteredExchange::send_file(int fd, off_t offset, uint64_t length,
                                 std::shared_ptr<const void> owner) {
    Guard guard(*this);
    BodyPart part;
    part.kind = BodyPart::Kind::file;
    part.fd = fd;
    part.offset = offset;
    part.length = length;
    part.owner = std::move(owner);
    to_filter(part);
}

void FilteredExchange::hand_over_buffer(core::BufferPool& pool, char* block) {
    Guard guard(*this);
    if (input_ == Input::tunnel && !output_done_) {
        client_->hand_over_buffer(pool, block);
        return;
    }
    if (output_done_ || !open_body()) {
        pool.release(block);
        return;
    }
    BodyPart part;
    part.block_pool = &pool;
    part.block = block;
    stream_->body(part);
}

void FilteredExchange::end_response() {
    Guard guard(*this);
    handler_done_ = true;
    listener_ = nullptr;
    if (input_ == Input::tunnel) {
        if (!std::exchange(output_done_, true)) client_->end_response();
        return;
    }
    if (open_body()) stream_->end();
}

void FilteredExchange::abort() {
    Guard guard(*this);
    handler_done_ = true;
    listener_ = nullptr;
    if (std::exchange(output_done_, true)) return;
    if (input_ != Input::tunnel) stream_->abort();
    client_->abort();
}

void FilteredExchange::respond_text(int status, std::string_view body) {
    Guard guard(*this);
    if (input_ != Input::head) {
        // The filter has this response's head already: it can't be
        // replaced, only cut.
        abort();
        return;
    }
    // The same head and body as the client's respond_text, through the
    // filter (a short text is below any filter's interest: compression's
    // min_length).
    bool bodyless = is_bodyless_status(status);
    head_.status = status;
    head_.length = bodyless ? 0 : body.size();
    head_.fields.clear();
    if (bodyless) {
        end_response();
        return;
    }
    head_.fields.add_lasting("Content-Type", "text/plain; charset=utf-8");
    send_body_pieces({&body, 1}, true);
}

void FilteredExchange::switch_protocols() {
    Guard guard(*this);
    // A tunnel carries no response body to filter: the head goes out as the
    // handler wrote it, and the filter is done.
    if (input_ != Input::head || output_done_) return;
    input_ = Input::tunnel;
    stream_->abort();
    send_head_to_client(head_);
    client_->switch_protocols();
}

void FilteredExchange::set_listener(ExchangeListener* listener) {
    listener_ = listener;
    if (!output_done_) listen_to_client();
}

void FilteredExchange::listen_to_client() {
    client_->set_listener(listener_ != nullptr || filter_listens_ ? this : nullptr);
}

bool FilteredExchange::output_pending() const {
    if (output_done_) return false;
    if (input_ == Input::tunnel) return client_->output_pending();
    return stream_->holds_output() || client_->output_pending();
}

// ---- the client's events -------------------------------------------------

bool FilteredExchange::on_request_body(std::string_view data) {
    Guard guard(*this);
    return listener_ ? listener_->on_request_body(data) : true;
}

void FilteredExchange::on_request_complete() {
    Guard guard(*this);
    if (listener_) listener_->on_request_complete();
}

void FilteredExchange::on_output_drained() {
    Guard guard(*this);
    if (output_done_) return;
    if (input_ != Input::tunnel) {
        stream_->on_output_drained();
        // The handler hears it once its bytes are all taken and written.
        if (output_done_ || output_pending()) return;
    }
    if (listener_) listener_->on_output_drained();
}

void FilteredExchange::on_client_gone() {
    Guard guard(*this);
    ExchangeListener* listener = std::exchange(listener_, nullptr);
    handler_done_ = true;
    if (!std::exchange(output_done_, true) && input_ != Input::tunnel) stream_->abort();
    if (listener) listener->on_client_gone();
}

// ---- what the filter passes on -------------------------------------------

void FilteredExchange::send_head_to_client(const HeadersOut& head) {
    if (head.length)
        client_->begin_response(head.status, *head.length);
    else
        client_->begin_streamed_response(head.status);
    for (size_t index = 0; index < head.fields.size(); ++index)
        client_->add_header(head.fields.name(index), head.fields.value(index));  // copied at once
    head_sent_ = true;
}

void FilteredExchange::pass_head(HeadersOut& head) {
    if (!output_done_ && !head_sent_) send_head_to_client(head);
}

void FilteredExchange::pass_body(BodyPart& part) {
    if (output_done_) {
        if (part.block) part.block_pool->release(part.block);
        return;
    }
    // Before the end reaches the client, which may start its next request
    // from inside that call.
    if (part.last) output_done_ = true;
    if (part.block) client_->hand_over_buffer(*part.block_pool, part.block);
    if (part.more_expected) client_->expect_more_body();
    switch (part.kind) {
    case BodyPart::Kind::memory:
        if (!part.pieces.empty() || part.last) client_->send_body_pieces(part.pieces, part.last);
        if (part.flush) client_->flush_body();
        return;
    case BodyPart::Kind::owned:
        client_->send_owned_body(part.pieces.front(), std::move(part.owner));
        break;
    case BodyPart::Kind::file:
        client_->send_file(part.fd, part.offset, part.length, std::move(part.owner));
        break;
    }
    if (part.last) client_->end_response();
}

void FilteredExchange::pass_end() {
    if (!std::exchange(output_done_, true)) client_->end_response();
}

void FilteredExchange::pass_abort() {
    if (std::exchange(output_done_, true)) return;
    ExchangeListener* listener = std::exchange(listener_, nullptr);
    handler_done_ = true;
    client_->abort();
    // abort() ends the connection without telling a listener: the handler
    // learns here that its exchange is gone.
    if (listener) listener->on_client_gone();
}

Exchange& FilteredExchange::pass_take_over() {
    ExchangeListener* listener = std::exchange(listener_, nullptr);
    output_done_ = handler_done_ = true;
    client_->set_listener(nullptr);
    if (listener) listener->on_client_gone();
    return *client_;
}

void FilteredExchange::pass_listen() {
    filter_listens_ = true;
    if (!output_done_) listen_to_client();
}

void FilterOutput::head(HeadersOut& head) {
    exchange_.pass_head(head);
}
void FilterOutput::body(BodyPart& part) {
    exchange_.pass_body(part);
}
void FilterOutput::end() {
    exchange_.pass_end();
}
void FilterOutput::abort() {
    exchange_.pass_abort();
}
Exchange& FilterOutput::take_over() {
    return exchange_.pass_take_over();
}
void FilterOutput::listen() {
    exchange_.pass_listen();
}
bool FilterOutput::pending() const {
    return !exchange_.output_done_ && exchange_.client_->output_pending();
}
const Request& FilterOutput::request() const {
    return exchange_.client_->request();
}

}  // namespace portico::http
