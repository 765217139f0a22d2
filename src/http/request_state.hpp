// What a request is while it is served, whichever protocol carries it: its
// location, its timeline and flags, and the record the counters and the
// access log read (H2O's h2o_req_t, nginx's ngx_http_request_t). The
// HTTP/1.1 connection and the HTTP/2 stream each fill one, and what only
// reads or writes it is written once, here (ServedExchange), not per codec.
#pragma once

#include <cstdint>
#include <string_view>

#include "http/exchange.hpp"
#include "http/peer_address.hpp"

namespace portico::http {

// The plain fields, reset in one assignment.
struct RequestState {
    // The request timeline (uv_hrtime), for the counters and the access log.
    uint64_t start_ns = 0;
    int location = -1;  // -1: none (yet), or answered without one
    // Set from the connection's peer when the request starts (Exchange::client_address).
    PeerAddress client{};
    bool handler_started = false;
    ExchangeListener* listener = nullptr;

    // Request body
    uint64_t body_received = 0;
    bool body_complete = false;
    bool body_held = false;  // the listener can't take more body for now

    // Response
    int response_status = 0;
    bool response_begun = false;
    bool head_committed = false;
    bool response_ended = false;

    // In the counters and the access log already: a request may end by more
    // than one route (its response written before its body was read, then
    // its message completing), and it is recorded by the first.
    bool recorded = false;
    // The proxy's part of the timeline (Exchange::set_upstream_timing).
    bool proxied = false;
    uint64_t upstream_ns = 0;
    uint64_t connect_ns = 0;
    std::string_view upstream_server;
};

// The Exchange methods that only touch the request state, for both codecs.
// `request_state_` points at the request being served (an HTTP/1.1 connection
// moves it from request to request).
class ServedExchange : public Exchange {
public:
    const PeerAddress& client_address() const final { return request_state_->client; }
    void set_client_address(const PeerAddress& address) final { request_state_->client = address; }
    void set_listener(ExchangeListener* listener) final { request_state_->listener = listener; }
    void hold_request_body() final { request_state_->body_held = true; }
    void set_upstream_timing(uint64_t upstream_ns, uint64_t connect_ns,
                             std::string_view server) final {
        request_state_->proxied = true;
        request_state_->upstream_ns = upstream_ns;
        request_state_->connect_ns = connect_ns;
        request_state_->upstream_server = server;
    }

protected:
    ~ServedExchange() = default;
    RequestState* request_state_ = nullptr;
};

}  // namespace portico::http
