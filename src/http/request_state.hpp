// What a client connection needs only while a request is in progress: the
// parser and its request, the response being built and written, and the
// request's timeline. It is taken from the worker's pool at a request's first
// byte and given back when the connection goes idle, so an idle keep-alive
// connection costs little more than its socket and handles.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "http/exchange.hpp"
#include "http/output_queue.hpp"
#include "http/request_parser.hpp"
#include "http/response_head.hpp"

namespace portico::http {

// The plain per-request fields, reset in one assignment.
struct RequestProgress {
    size_t body_start = 0;  // offset of the body in the input buffer
    uint64_t body_received = 0;
    bool body_complete = false;
    bool body_too_large = false;
    bool body_held = false;  // the listener can't take more body for now

    char* head_buffer = nullptr;  // from the worker's buffer pool
    ResponseHead head{nullptr, 0};
    std::shared_ptr<const void> body_owner;  // keeps a file being sent open, or its bytes
    // A handler's buffer with body bytes in the output (hand_over_buffer).
    core::BufferPool* handed_over_pool = nullptr;
    char* handed_over_block = nullptr;
    bool response_begun = false;
    bool response_ended = false;
    bool head_committed = false;
    // A streamed response to an HTTP/1.1 client: the connection chunk-encodes it.
    bool chunked_response = false;
    // Bytes after the head, in the head buffer, taken by chunk-size lines
    // still queued (they must live until written).
    size_t chunk_lines_used = 0;

    // The request timeline (uv_hrtime), for the counters and the access log.
    uint64_t start_ns = 0;
    // In the counters and the access log already: a request may end by more
    // than one route (its response written before its body was read, then
    // its message completing), and it is recorded by the first.
    bool recorded = false;
    int response_status = 0;
    uint64_t response_start_bytes = 0;
    uint64_t response_start_file_bytes = 0;
    bool proxied = false;
    uint64_t upstream_ns = 0;
    uint64_t connect_ns = 0;
    std::string_view upstream_server;

    int location = -1;
    bool handler_started = false;
    ExchangeListener* listener = nullptr;
};

struct RequestState : RequestProgress {
    // Kept across requests for their allocated capacity (header list, path,
    // output pieces): no allocation per request once warm.
    RequestParser parser;
    OutputQueue output;

    void reset(RequestParser::BodyReceiver& receiver) {
        static_cast<RequestProgress&>(*this) = RequestProgress{};
        output.clear();
        parser.restart(receiver);
    }
};

// The worker's free list of request states.
class RequestStatePool {
public:
    ~RequestStatePool();
    // A state as good as new, whose parser delivers bodies to `receiver`.
    RequestState* acquire(RequestParser::BodyReceiver& receiver);
    void release(RequestState* state);

private:
    std::vector<RequestState*> free_;
};

}  // namespace portico::http
