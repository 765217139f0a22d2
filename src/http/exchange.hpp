// What a handler sees of one request and its response. The client connection
// implements it; a handler never touches the socket, so every handler gets
// keep-alive, HEAD, timeouts and back-pressure the same way.
//
// The exchange carries body data, never framing: a chunked request body
// arrives decoded, and a response of unknown length is framed by the
// protocol (HTTP/1.1 chunks here; HTTP/2's DATA frames later), so a body
// filter such as compression can sit between a handler and the codec
// (nginx's chunked filter, H2O's HTTP/1 ostream).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "config/config.hpp"
#include "core/buffer_pool.hpp"
#include "http/peer_address.hpp"
#include "http/request.hpp"

namespace portico::http {

// What a handler that answers later, from the event loop, hears from its
// exchange. Every call is made from the worker's loop.
class ExchangeListener {
public:
    // Request body data (a chunked body decoded: no chunk-size lines, no
    // trailers), valid only during the call: the listener takes it all
    // (sends or copies it). It returns false when it can't take more for
    // now: nothing more is delivered, and the client is not read, until
    // resume_request_body(). In a tunnel (after switch_protocols), every
    // byte from the client, as it came.
    virtual bool on_request_body(std::string_view data) = 0;
    virtual void on_request_complete() = 0;  // the last body byte was delivered
    // Everything queued was written, after send_body had left output pending.
    virtual void on_output_drained() = 0;
    // The client closed or failed: the exchange is over and must not be used again.
    virtual void on_client_gone() = 0;

protected:
    ~ExchangeListener() = default;
};

class Exchange {
public:
    virtual const Request& request() const = 0;
    virtual const config::LocationConfig& location() const = 0;
    // The client the request is from: the connection's peer (or the address
    // its PROXY header gave), unless a trusted proxy named another in
    // X-Forwarded-For (http/forwarded_client.hpp replaces it then). What
    // $remote_addr, the access log, ip_hash and X-Real-IP see.
    virtual const PeerAddress& client_address() const = 0;
    virtual void set_client_address(const PeerAddress& address) = 0;

    // A response is: begin_response, any add_header, any send_body/send_file,
    // end_response. `content_length` is the exact body length (also for HEAD,
    // whose body the exchange drops). The location's `headers` are added by
    // the exchange.
    virtual void begin_response(int status, uint64_t content_length) = 0;
    // The same for a body whose length is not known in advance. The
    // connection frames it for its client: chunked for HTTP/1.1, ended by
    // the close for HTTP/1.0, nothing at all for HEAD, 204 and 304.
    virtual void begin_streamed_response(int status) = 0;
    virtual void add_header(std::string_view name, std::string_view value) = 0;
    // The bytes must stay valid until they are written: until end_response,
    // or until output_pending() is false (on_output_drained tells when). A
    // streaming handler sends more only once output_pending() is false.
    virtual void send_body(std::string_view bytes) = 0;
    // Several pieces that go out together (one chunk of a chunked response,
    // one writev with whatever is queued before them); `last`: they end the
    // response, as end_response() would, in the same write.
    virtual void send_body_pieces(std::span<const std::string_view> pieces, bool last) = 0;
    // For a source that passes its body on as it reads it in blocks (the
    // proxy): the next send_body_pieces is followed at once by more (its
    // read filled the block, or one read's pieces go in several sends). A
    // filter that makes each send decodable on its own (compression's flush
    // per send: what keeps a stream live) may then wait for the next one.
    // The source calls flush_body() before it goes back to waiting, when
    // what it expected did not come. The connections write every send at
    // once and need neither.
    virtual void expect_more_body() {}
    virtual void flush_body() {}
    // A whole body, with `owner` keeping the bytes alive until the response
    // has been sent (a cached file's contents); written by end_response. An
    // owner also stands for its bytes: the same owner always means the same
    // bytes, so a filter may keep what it derives from them while the owner
    // lives (the compressed cache keys on the file cache's OpenFile).
    virtual void send_owned_body(std::string_view bytes, std::shared_ptr<const void> owner) = 0;
    // `owner` keeps the descriptor open until the response has been sent,
    // and stands for the file's bytes as above.
    virtual void send_file(int fd, off_t offset, uint64_t length,
                           std::shared_ptr<const void> owner) = 0;
    // `block`, from `pool`, holds body bytes already sent that a slow client
    // may not have read yet: the exchange gives it back to `pool` once the
    // response is out (or the connection closes), so a handler that is done
    // before its client need not wait for it. At most one per response.
    virtual void hand_over_buffer(core::BufferPool& pool, char* block) = 0;
    virtual void end_response() = 0;
    // The response can't be completed (its source failed): the client
    // connection is closed at once, so the client sees a truncated response,
    // never one that looks complete.
    virtual void abort() = 0;

    // A whole short response: the status and a plain-text body, through
    // the calls above (a filter may answer it another way).
    virtual void respond_text(int status, std::string_view body);

    // For handlers that answer later (set before returning from serve()).
    virtual void set_listener(ExchangeListener* listener) = 0;
    virtual void resume_request_body() = 0;
    // The client is not read, and nothing more of the body delivered,
    // until resume_request_body(): a request that waits before its content
    // (http/admission.hpp). A handler that listens calls
    // resume_request_body() once it does, in case its request was held.
    virtual void hold_request_body() = 0;
    virtual bool output_pending() const = 0;
    // After a 101 head: the head goes out as the handler wrote it (its
    // Connection and Upgrade headers), then bytes are tunnelled both ways:
    // client bytes to on_request_body, send_body to the client, until
    // end_response (the other side closed) or on_client_gone.
    virtual void switch_protocols() = 0;

    // The proxy's part of the request timeline, for the counters and the
    // access log: request sent upstream to last upstream byte, and the
    // connect time (0: a pooled connection).
    virtual void set_upstream_timing(uint64_t upstream_ns, uint64_t connect_ns,
                                     std::string_view server) = 0;

protected:
    ~Exchange() = default;
};

// A handler answers a request (now, or later from the event loop) and
// returns true, or declines with false and the location's next handler is
// tried ("the file if it exists, else the upstream"); when all decline: 404.
class Handler {
public:
    virtual ~Handler() = default;
    virtual bool serve(Exchange& exchange) = 0;
    // A handler that streams the request body is started as soon as the head
    // is in; the others once the whole request has arrived, so a bad or
    // oversized body still gets its 400/413.
    virtual bool streams_request_body() const { return false; }
};

}  // namespace portico::http
