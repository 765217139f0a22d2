// What an HTTP/1.1 connection needs only while a request is in progress:
// the shared request state (http/request_state.hpp), the parser and its
// request, the response head being built and the output being written. It
// is taken from a pool at a request's first byte and given back when the
// connection goes idle, so an idle keep-alive connection costs little more
// than its socket and handles.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/buffer_pool.hpp"
#include "http/request_state.hpp"
#include "http/response_head.hpp"
#include "http1/request_parser.hpp"
#include "transport/output_queue.hpp"

namespace portico::http1 {

// The plain per-request fields, reset in one assignment.
struct RequestProgress : http::RequestState {
    size_t body_start = 0;  // offset of the body in the input buffer
    bool body_too_large = false;

    char* head_buffer = nullptr;  // from the worker's buffer pool
    http::ResponseHead head{nullptr, 0};
    std::shared_ptr<const void> body_owner;  // keeps a file being sent open, or its bytes
    // A handler's buffer with body bytes in the output (hand_over_buffer).
    core::BufferPool* handed_over_pool = nullptr;
    char* handed_over_block = nullptr;
    // A streamed response to an HTTP/1.1 client: the connection chunk-encodes it.
    bool chunked_response = false;
    // Bytes after the head, in the head buffer, taken by chunk-size lines
    // still queued (they must live until written).
    size_t chunk_lines_used = 0;
    // Where the connection's byte counts stood when the response began.
    uint64_t response_start_bytes = 0;
    uint64_t response_start_file_bytes = 0;
};

struct CodecState : RequestProgress {
    // Kept across requests for their allocated capacity (header list, path,
    // output pieces): no allocation per request once warm.
    RequestParser parser;
    transport::OutputQueue output;

    void reset(RequestParser::BodyReceiver& receiver) {
        static_cast<RequestProgress&>(*this) = RequestProgress{};
        output.clear();
        parser.restart(receiver);
    }
};

// The free list of request states (one per thread: a worker is one loop
// on one thread).
class CodecStatePool {
public:
    ~CodecStatePool();
    // A state as good as new, whose parser delivers bodies to `receiver`.
    CodecState* acquire(RequestParser::BodyReceiver& receiver);
    void release(CodecState* state);

private:
    std::vector<CodecState*> free_;
};

CodecStatePool& codec_state_pool();

}  // namespace portico::http1
