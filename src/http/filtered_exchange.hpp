// The Exchange a filtered response's handlers answer, written once for
// every filter: what the handlers ask of the request, its listener and its
// timing goes to the client's exchange; what they send becomes the
// filter's head / body / end / abort (http/response_filter.hpp), and what
// the filter passes on goes to the client's exchange.
//
// The head is held here until the first body call or the end (headers come
// one by one after begin_response), then given to the filter. Back-pressure:
// output_pending() is the filter's holds_output() or the client's pending
// output; a drain reaches the filter first, then the handler once nothing
// is held or pending.
//
// It lives until both sides are done: the client's response is out (ended,
// aborted, or the client gone) and the handler has ended its part; then it
// goes back to its ResponseFilter, never under a call still running (see
// Guard).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "http/exchange.hpp"
#include "http/response_filter.hpp"

namespace portico::http {

class FilteredExchange final : public Exchange, private ExchangeListener {
public:
    FilteredExchange(ResponseFilter& filter, std::unique_ptr<FilterStream> stream);
    FilteredExchange(const FilteredExchange&) = delete;
    FilteredExchange& operator=(const FilteredExchange&) = delete;

    // A new request on `client`; false when the filter declines it.
    bool start(Exchange& client);

    // http::Exchange
    const Request& request() const override { return client_->request(); }
    const config::LocationConfig& location() const override { return client_->location(); }
    const PeerAddress& client_address() const override { return client_->client_address(); }
    void set_client_address(const PeerAddress& address) override {
        client_->set_client_address(address);
    }
    void begin_response(int status, uint64_t content_length) override;
    void begin_streamed_response(int status) override;
    void add_header(std::string_view name, std::string_view value) override;
    void send_body(std::string_view bytes) override { send_body_pieces({&bytes, 1}, false); }
    void send_body_pieces(std::span<const std::string_view> pieces, bool last) override;
    void expect_more_body() override { more_expected_ = true; }
    void flush_body() override;
    void send_owned_body(std::string_view bytes, std::shared_ptr<const void> owner) override;
    void send_file(int fd, off_t offset, uint64_t length,
                   std::shared_ptr<const void> owner) override;
    void hand_over_buffer(core::BufferPool& pool, char* block) override;
    void end_response() override;
    void abort() override;
    void respond_text(int status, std::string_view body) override;
    void set_listener(ExchangeListener* listener) override;
    void resume_request_body() override { client_->resume_request_body(); }
    void hold_request_body() override { client_->hold_request_body(); }
    bool output_pending() const override;
    void switch_protocols() override;
    void set_upstream_timing(uint64_t upstream_ns, uint64_t connect_ns,
                             std::string_view server) override {
        client_->set_upstream_timing(upstream_ns, connect_ns, server);
    }

private:
    friend class FilterOutput;
    friend class ResponseFilter;
    struct Guard;
    enum class Input : uint8_t {
        head,    // the head is collected here: the filter has seen nothing yet
        body,    // the filter has the head
        tunnel,  // after switch_protocols: everything goes to the client as it is
    };

    // ExchangeListener: the client's events.
    bool on_request_body(std::string_view data) override;
    void on_request_complete() override;
    void on_output_drained() override;
    void on_client_gone() override;

    // The handler's body call: the filter gets the head first. False when
    // the response is over on the client's side.
    bool open_body();
    void to_filter(BodyPart& part);
    void send_head_to_client(const HeadersOut& head);
    void listen_to_client();

    // FilterOutput's calls.
    void pass_head(HeadersOut& head);
    void pass_body(BodyPart& part);
    void pass_end();
    void pass_abort();
    void pass_listen();
    Exchange& pass_take_over();

    ResponseFilter& filter_;
    std::unique_ptr<FilterStream> stream_;
    FilterOutput output_;
    Exchange* client_ = nullptr;
    ExchangeListener* listener_ = nullptr;  // the handler's
    HeadersOut head_;
    int depth_ = 0;
    Input input_ = Input::head;
    bool head_sent_ = false;       // the client has the head
    bool output_done_ = true;      // the client's response is over
    bool handler_done_ = true;     // the handler has ended its part
    bool filter_listens_ = false;  // FilterOutput::listen
    bool more_expected_ = false;   // expect_more_body: for the next send
};

}  // namespace portico::http
