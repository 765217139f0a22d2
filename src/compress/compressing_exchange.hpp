// One request's response on its way through a compressing location: the
// exchange its handlers answer through, standing before the client
// connection's. It holds the head back until the body starts (or the
// response ends), decides then from the status and headers (see
// response_rules.hpp), and either passes everything on as it came, or
// sends the head changed (Content-Encoding, Vary, a weak ETag, no length)
// and the body compressed:
//
// - a body sent whole with its owner (a static file, from memory or by
//   sendfile) is compressed whole, once: the CompressedCache keeps it, and
//   it goes out with its compressed Content-Length;
// - any other body is a stream: each send is compressed and flushed at once
//   (a server-sent event is decodable as soon as it is out) into one output
//   block, written as a chunk. When the client can't take the block, the
//   rest of the input waits (the handler keeps it valid while
//   output_pending() says so) and the handler hears on_output_drained once
//   it is all out: the same back-pressure as without the filter, and a
//   stream holds at most one block besides the encoder's state.
//
// It outlives its handler when the last bytes wait for a slow client, and
// goes back to its CompressionFilter once the response is out or the
// client gone (never under a call still running: see Guard).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "compress/response_rules.hpp"
#include "compress/stream_encoder.hpp"
#include "config/config.hpp"
#include "http/exchange.hpp"

namespace portico::compress {

class CompressionFilter;

class CompressingExchange final : public http::Exchange, private http::ExchangeListener {
public:
    explicit CompressingExchange(CompressionFilter& filter) : filter_(filter) {}
    CompressingExchange(const CompressingExchange&) = delete;
    CompressingExchange& operator=(const CompressingExchange&) = delete;

    // A new request on `client`; `coding`: what the client accepts best
    // (nullopt: none we have).
    void start(http::Exchange& client, std::optional<config::Coding> coding);

    // http::Exchange
    const http::Request& request() const override { return client_->request(); }
    const config::LocationConfig& location() const override { return client_->location(); }
    const http::PeerAddress& client_address() const override { return client_->client_address(); }
    void begin_response(int status, uint64_t content_length) override;
    void begin_streamed_response(int status) override;
    void add_header(std::string_view name, std::string_view value) override;
    void send_body(std::string_view bytes) override;
    void send_body_pieces(std::span<const std::string_view> pieces, bool last) override;
    void expect_more_body() override { more_expected_ = true; }
    void flush_body() override;
    void send_owned_body(std::string_view bytes, std::shared_ptr<const void> owner) override;
    void send_file(int fd, off_t offset, uint64_t length, std::shared_ptr<const void> owner) override;
    void hand_over_buffer(core::BufferPool& pool, char* block) override;
    void end_response() override;
    void abort() override;
    void respond_text(int status, std::string_view body) override;
    void set_listener(http::ExchangeListener* listener) override;
    void resume_request_body() override { client_->resume_request_body(); }
    bool output_pending() const override;
    void switch_protocols() override;
    void set_upstream_timing(uint64_t upstream_ns, uint64_t connect_ns,
                             std::string_view server) override {
        client_->set_upstream_timing(upstream_ns, connect_ns, server);
    }

private:
    enum class Phase {
        head,         // the head is held back: nothing decided yet
        as_is,        // passed on as it comes
        compressing,  // a stream: each send compressed and flushed (unless more follows at once)
        done,         // the response is out (or handed to the client whole), or the client gone
    };
    struct Guard;
    // What the filter reads or changes of a header: told once, when it is
    // added, so deciding and replaying compare no names.
    enum class Role : uint8_t {
        other, content_type, content_encoding, cache_control, etag, vary, accept_ranges
    };
    struct StoredHeader {
        uint32_t name_at, name_size, value_at, value_size;
        Role role;
    };
    // A body sent whole with its owner: in memory, or a file range.
    struct WholeBody {
        std::shared_ptr<const void> owner;
        std::string_view bytes;  // empty for a file
        int fd = -1;
        off_t offset = 0;
        uint64_t length = 0;
    };

    // http::ExchangeListener: the client connection's events.
    bool on_request_body(std::string_view data) override;
    void on_request_complete() override;
    void on_output_drained() override;
    void on_client_gone() override;

    std::string_view stored(uint32_t at, uint32_t size) const { return {header_text_.data() + at, size}; }
    static Role role_of(std::string_view name);
    // The value of the first header in `role`, or an empty view.
    std::string_view value_of(Role role) const;
    Treatment decide() const;
    // The head goes out: as it came (with Vary when `vary`), or as the
    // compressed representation's (`compressed_length`: when known).
    void commit_as_is(bool vary);
    void commit_compressed(std::optional<uint64_t> compressed_length);
    void replay_headers(bool compressed, bool vary);
    // At the first body call, or the end of a response without one.
    void commit_stream();
    void send_whole(WholeBody body);
    // From the cache (`cached` set), or compressed now and kept.
    std::shared_ptr<const std::string> compressed_whole(const WholeBody& body, bool& cached);
    void pass_whole(WholeBody body);

    void take(std::span<const std::string_view> pieces, bool last);
    void pump();
    bool compress_pending(std::span<char>& room);
    void finish_stream(std::string_view last_piece);
    void fail(const char* what);
    void listen_to_client();
    // Ends our part: what we hold goes back, and nothing more is forwarded.
    void release();

    CompressionFilter& filter_;
    http::Exchange* client_ = nullptr;
    http::ExchangeListener* listener_ = nullptr;  // the handler's
    std::optional<config::Coding> coding_;
    Phase phase_ = Phase::done;
    int depth_ = 0;

    // The head held back.
    int status_ = 0;
    std::optional<uint64_t> length_;
    std::string header_text_;  // names and values, back to back
    std::vector<StoredHeader> headers_;
    bool vary_covered_ = false;  // a Vary names Accept-Encoding already (or is "*")
    std::string scratch_;        // a changed header value (W/ ETag, merged Vary), reused
    // A block the handler handed over (its bytes still to be compressed, or,
    // as is, still to be written): passed on, or given back once taken.
    core::BufferPool* handed_pool_ = nullptr;
    char* handed_block_ = nullptr;

    // The stream.
    std::unique_ptr<StreamEncoder> encoder_;
    char* block_ = nullptr;  // output, from the filter's pool
    std::vector<std::string_view> pending_;  // input not compressed yet, in order
    size_t next_piece_ = 0;
    bool finishing_ = false;  // the handler sent its last byte
    bool flush_unfinished_ = false;  // the room ran out in the middle of a flush
    bool more_expected_ = false;  // expect_more_body: for the next send
    // The pending input needs no flush: more follows at once (the send's
    // expect_more_body). What it left in the encoder is then owed a flush,
    // by the next send or by flush_body().
    bool hold_flush_ = false;
    bool flush_owed_ = false;
    std::shared_ptr<const void> owner_;  // keeps owned bytes sent as a stream alive
    uint64_t bytes_in_ = 0;
    uint64_t bytes_out_ = 0;
};

}  // namespace portico::compress
