// One response's pass through a compressing location's filter
// (http/response_filter.hpp). It decides at the head from the status and
// headers (see response_rules.hpp) and either passes everything on as it
// came, or passes the head on changed (Content-Encoding, Vary, a weak ETag,
// no length) with the body compressed:
//
// - a body sent whole with its owner (a static file, from memory or by
//   sendfile) is compressed whole, once: the CompressedCache keeps it, and
//   it goes out with its compressed Content-Length (so a compressed head is
//   held until the first body part shows which it is);
// - any other body is a stream: each send is compressed and flushed at once
//   (a server-sent event is decodable as soon as it is out) into one output
//   block, written as a chunk. When the client can't take the block, the
//   rest of the input waits (holds_output: the handler keeps it valid while
//   its output_pending() says so) until on_output_drained: the same
//   back-pressure as without the filter, and a stream holds at most one
//   block besides the encoder's state.
#pragma once

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
#include "http/response_filter.hpp"

namespace portico::compress {

class CompressionFilter;

class CompressionStream final : public http::FilterStream {
public:
    explicit CompressionStream(CompressionFilter& filter) : filter_(filter) {}

    // HEAD, Range and upgrade requests are declined.
    bool start(const http::Request& request) override;
    void head(http::HeadersOut& head) override;
    void body(http::BodyPart& part) override;
    void end() override;
    void abort() override;
    bool holds_output() const override { return phase_ == Phase::compressing && !pending_.empty(); }
    void on_output_drained() override;

private:
    enum class Phase {
        held,         // to compress: the head waits for the first body part
        as_is,        // passed on as it comes
        compressing,  // a stream: each send compressed and flushed (unless more follows at once)
        done,         // the response is out (or handed on whole), or over
    };
    // What the filter reads or changes of a header field.
    enum class Role : uint8_t {
        other,
        content_type,
        content_encoding,
        cache_control,
        etag,
        vary,
        accept_ranges
    };

    static Role role_of(std::string_view name);
    // The value of the first field in `role`, or an empty view.
    std::string_view value_of(Role role) const;
    // Vary: Accept-Encoding, merged into the first Vary, unless one covers it.
    void add_vary();
    // The head goes on: as it came (with Vary when `vary`), or as the
    // compressed representation's (`compressed_length`: when known).
    void commit_as_is(bool vary);
    void commit_compressed(std::optional<uint64_t> compressed_length);
    // At the first body part, or the end of a response without one.
    void commit_stream();
    void send_whole(http::BodyPart& body);
    // From the cache (`cached` set), or compressed now and kept.
    std::shared_ptr<const std::string> compressed_whole(const http::BodyPart& body, bool& cached);

    void take(std::span<const std::string_view> pieces, bool last, bool more_expected);
    void pump();
    bool compress_pending(std::span<char>& room);
    void finish_stream(std::string_view last_piece);
    void fail(const char* what);
    // Ends our part: what we hold goes back.
    void release();
    void keep_block(http::BodyPart& part);

    CompressionFilter& filter_;
    std::optional<config::Coding> coding_;
    Phase phase_ = Phase::done;

    http::HeadersOut* head_ = nullptr;
    std::vector<Role> roles_;  // of head_'s fields, in order
    std::string scratch_;      // a changed header value (W/ ETag, merged Vary), reused
    // A block the handler handed over (its bytes still to be compressed, or,
    // as is, still to be written): passed on, or given back once taken.
    core::BufferPool* handed_pool_ = nullptr;
    char* handed_block_ = nullptr;

    // The stream.
    std::unique_ptr<StreamEncoder> encoder_;
    char* block_ = nullptr;                  // output, from the filter's pool
    std::vector<std::string_view> pending_;  // input not compressed yet, in order
    size_t next_piece_ = 0;
    bool finishing_ = false;         // the handler sent its last byte
    bool flush_unfinished_ = false;  // the room ran out in the middle of a flush
    // The pending input needs no flush: more follows at once (the send's
    // more_expected). What it left in the encoder is then owed a flush,
    // by the next send or by a flush part.
    bool hold_flush_ = false;
    bool flush_owed_ = false;
    std::shared_ptr<const void> owner_;  // keeps owned bytes sent as a stream alive
    uint64_t bytes_in_ = 0;
    uint64_t bytes_out_ = 0;
};

}  // namespace portico::compress
