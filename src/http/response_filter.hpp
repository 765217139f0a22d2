// A response filter: what a location puts between its handlers and the
// client (nginx's header and body filter chains, H2O's ostreams set up by
// on_setup_ostream). A filter sees each response as four calls, head, body,
// end and abort, and passes its output on through FilterOutput; it never
// implements the Exchange. The handlers answer a FilteredExchange
// (http/filtered_exchange.hpp), which turns their Exchange calls into those
// four, and never know a filter is there. A location without a filter
// answers the client's exchange directly and pays nothing.
// Compression is one (compress/compression_filter.hpp).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "core/buffer_pool.hpp"
#include "http/header_list.hpp"
#include "http/request.hpp"

namespace portico::http {

class Exchange;
class FilteredExchange;

// A response's status and header fields as a filter sees them (nginx's
// headers_out): copies, which the filter may change before passing them
// on. The client connection adds its own (Date, Connection, the location's
// `headers`) after them.
struct HeadersOut {
    int status = 0;
    std::optional<uint64_t> length;  // the body's exact length; nullopt: streamed
    HeaderList fields;
};

// One body call: pieces in memory, a whole body owned by `owner`, or a file
// range; with the hints a source that streams gives.
struct BodyPart {
    enum class Kind : uint8_t {
        memory,  // `pieces`: valid until written (until the response ends, or
                 // until the output is no longer pending), as send_body's
        owned,   // `pieces[0]`: a whole body, kept alive by `owner`
        file,    // `fd`, `offset`, `length`: a file range, kept open by `owner`
    };
    Kind kind = Kind::memory;
    std::span<const std::string_view> pieces;
    int fd = -1;
    off_t offset = 0;
    uint64_t length = 0;
    // Keeps owned bytes and files alive until the response is out, and
    // stands for the bytes: the same owner, the same bytes, so a filter may
    // keep what it derives from them while the owner lives. A filter may
    // move it out.
    std::shared_ptr<const void> owner;
    // A block from `block_pool` holding body bytes already sent
    // (Exchange::hand_over_buffer), handed on with this part: whoever takes
    // the part gives it back once those bytes are written or consumed.
    core::BufferPool* block_pool = nullptr;
    char* block = nullptr;
    // More body follows at once (Exchange::expect_more_body): this part
    // need not be made decodable on its own.
    bool more_expected = false;
    // Nothing new: what was held back for the more that was expected must
    // go now (Exchange::flush_body).
    bool flush = false;
    // The response ends with this part, in the same write; end() does not
    // follow.
    bool last = false;

    uint64_t size() const {
        if (kind == Kind::file) return length;
        uint64_t total = 0;
        for (std::string_view piece : pieces) total += piece.size();
        return total;
    }
};

// Where a filter's output goes: the client's exchange, through the
// response's FilteredExchange. The same four calls as the filter's own,
// and what back-pressure needs.
class FilterOutput {
public:
    void head(HeadersOut& head);
    void body(BodyPart& part);
    void end();
    // The filter cannot complete the response (its encoder failed): the
    // client connection is closed, so the client sees it cut, and the
    // handler hears on_client_gone. The filter drops what it holds itself.
    void abort();
    // The client has output not written yet: pass on more once
    // FilterStream::on_output_drained comes.
    bool pending() const;
    // From now on the filter hears on_output_drained (and abort, when the
    // client goes) even when its handler does not listen: for a filter
    // that holds output.
    void listen();
    const Request& request() const;
    // The filter answers this request another way (an error page): nothing
    // more of this response reaches the client, the handler hears
    // on_client_gone (a proxy stops reading its upstream) and what it still
    // sends is dropped. Returns the client's exchange, free for the new
    // response, which must be answered on it.
    Exchange& take_over();

private:
    friend class FilteredExchange;
    explicit FilterOutput(FilteredExchange& exchange) : exchange_(exchange) {}
    FilteredExchange& exchange_;
};

// One response's pass through a filter: made once per response running at
// the same time, and reused response after response.
class FilterStream {
public:
    virtual ~FilterStream() = default;

    // A new request: false when its response does not go through the
    // filter (its handlers then answer the client directly: nothing more
    // is paid). Otherwise head comes at the handler's first body call (or
    // its end), then body calls, then end() or a last body part, or abort.
    virtual bool start(const Request& request) = 0;
    // The head: the filter changes it as it must and passes it on
    // (next().head), now or with its first output; it stays valid until the
    // response is over.
    virtual void head(HeadersOut& head) = 0;
    virtual void body(BodyPart& part) = 0;
    virtual void end() = 0;
    // The response does not complete through the filter (the handler
    // aborted, the client went away, a tunnel began): drop what is held.
    // The output takes nothing more.
    virtual void abort() = 0;

    // Back-pressure. True while the filter holds input it took and has not
    // passed on (its output waits for the client): the handler's
    // output_pending() says so, and it sends no more until drained.
    virtual bool holds_output() const { return false; }
    // The client's output was written, after next().pending() was true.
    // The handler hears it after this call when nothing is held or pending
    // any more.
    virtual void on_output_drained() {}

protected:
    FilterOutput& next() { return *next_; }

private:
    friend class FilteredExchange;
    FilterOutput* next_ = nullptr;
};

// A location's filter, one per worker: it lends a FilteredExchange, with a
// FilterStream of its kind, to each response it filters.
class ResponseFilter {
public:
    ResponseFilter();
    ResponseFilter(const ResponseFilter&) = delete;
    ResponseFilter& operator=(const ResponseFilter&) = delete;
    virtual ~ResponseFilter();

    // The exchange this request's handlers answer through: `client` itself
    // when the stream declines the request (FilterStream::start). A
    // FilteredExchange lives until its response is out or the client gone.
    Exchange& wrap(Exchange& client);
    // Gives back what wrap(client) lent when nothing was answered through
    // it (the request steps that let a request go on). For a filter whose
    // output goes to the client itself (no output_through).
    void unwrap(Exchange& wrapped, Exchange& client);
    // The same for `wrapped` that this filter's stream took (start said
    // yes): returns the exchange it wraps, for a response answered past
    // this filter (a cache hit stored in its final coding already).
    Exchange& unwrap_taken(Exchange& wrapped);

    // This filter's output goes through `closer` before the client (a
    // location's compression, then its error pages).
    void output_through(ResponseFilter& closer) { closer_ = &closer; }

protected:
    virtual std::unique_ptr<FilterStream> new_stream() = 0;

private:
    friend class FilteredExchange;
    void recycle(FilteredExchange& exchange) { free_.push_back(&exchange); }

    // Every exchange made, reused from free_: as many as responses ever ran
    // at once here.
    std::vector<std::unique_ptr<FilteredExchange>> exchanges_;
    std::vector<FilteredExchange*> free_;
    ResponseFilter* closer_ = nullptr;
};

}  // namespace portico::http
