#include "compress/compressing_exchange.hpp"

#include <unistd.h>

#include <cerrno>

#include "compress/compression_filter.hpp"
#include "core/log.hpp"
#include "http/header_text.hpp"

namespace portico::compress {

namespace {

// A body sent whole is compressed whole, once, on the worker's loop (the
// cache keeps it); above this size it goes out as it is rather than stall
// every other connection of the worker while it is compressed.
constexpr uint64_t max_whole_body = 4 * 1024 * 1024;

// pread(2) until `length` bytes are in; false when the file is shorter now
// or unreadable.
bool read_range(int fd, char* into, uint64_t length, off_t offset) {
    while (length > 0) {
        ssize_t got = ::pread(fd, into, length, offset);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return false;
        into += got;
        offset += got;
        length -= static_cast<uint64_t>(got);
    }
    return true;
}

}  // namespace

// Every entry point holds one: the exchange goes back to its filter when the
// outermost call returns after the response ended, never under a caller
// (the connection finishing the request, a pipelined request starting in
// the same call) still using it.
struct CompressingExchange::Guard {
    explicit Guard(CompressingExchange& exchange) : self(exchange) { ++self.depth_; }
    ~Guard() {
        if (--self.depth_ == 0 && self.phase_ == Phase::done && self.client_ != nullptr) {
            self.client_ = nullptr;
            self.filter_.recycle(self);
        }
    }
    CompressingExchange& self;
};

void CompressingExchange::start(http::Exchange& client, std::optional<config::Coding> coding) {
    client_ = &client;
    listener_ = nullptr;
    coding_ = coding;
    phase_ = Phase::head;
    status_ = 0;
    length_.reset();
    header_text_.clear();
    headers_.clear();
    vary_covered_ = false;
    bytes_in_ = bytes_out_ = 0;
}

// ---- the head, held back -------------------------------------------------

void CompressingExchange::begin_response(int status, uint64_t content_length) {
    status_ = status;
    length_ = content_length;
}

void CompressingExchange::begin_streamed_response(int status) {
    status_ = status;
    length_.reset();
}

void CompressingExchange::add_header(std::string_view name, std::string_view value) {
    if (phase_ != Phase::head) {
        client_->add_header(name, value);
        return;
    }
    // Views into the handler's buffers would not outlive its call: copied.
    auto at = static_cast<uint32_t>(header_text_.size());
    header_text_.append(name);
    header_text_.append(value);
    Role role = role_of(name);
    if (role == Role::vary && vary_covers_accept_encoding(value)) vary_covered_ = true;
    headers_.push_back({at, static_cast<uint32_t>(name.size()),
                        at + static_cast<uint32_t>(name.size()), static_cast<uint32_t>(value.size()),
                        role});
}

CompressingExchange::Role CompressingExchange::role_of(std::string_view name) {
    // By length first: one comparison at most per header, on every request.
    auto is = [name](std::string_view lowercase) {
        return http::equals_ignore_case_same_size(name.data(), lowercase.data(), name.size());
    };
    switch (name.size()) {
    case 4: return is("etag") ? Role::etag : is("vary") ? Role::vary : Role::other;
    case 12: return is("content-type") ? Role::content_type : Role::other;
    case 13:
        return is("cache-control")   ? Role::cache_control
               : is("accept-ranges") ? Role::accept_ranges
                                     : Role::other;
    case 16: return is("content-encoding") ? Role::content_encoding : Role::other;
    default: return Role::other;
    }
}

std::string_view CompressingExchange::value_of(Role role) const {
    for (const StoredHeader& stored_header : headers_)
        if (stored_header.role == role) return stored(stored_header.value_at, stored_header.value_size);
    return {};
}

Treatment CompressingExchange::decide() const {
    ResponseFacts facts{status_, length_, value_of(Role::content_type),
                        value_of(Role::content_encoding), value_of(Role::cache_control)};
    return treatment_for(facts, filter_.config(), coding_.has_value());
}

void CompressingExchange::commit_as_is(bool vary) {
    phase_ = Phase::as_is;
    if (length_) client_->begin_response(status_, *length_);
    else client_->begin_streamed_response(status_);
    replay_headers(false, vary);
    if (handed_block_)
        client_->hand_over_buffer(*std::exchange(handed_pool_, nullptr),
                                  std::exchange(handed_block_, nullptr));
}

void CompressingExchange::commit_compressed(std::optional<uint64_t> compressed_length) {
    // Without a length the connection frames the body: chunks on HTTP/1.1,
    // the close on HTTP/1.0.
    if (compressed_length) client_->begin_response(status_, *compressed_length);
    else client_->begin_streamed_response(status_);
    replay_headers(true, true);
    client_->add_header("Content-Encoding", config::coding_name(*coding_));
}

void CompressingExchange::replay_headers(bool compressed, bool vary) {
    bool vary_done = !vary || vary_covered_;
    std::string& changed = scratch_;
    for (const StoredHeader& stored_header : headers_) {
        std::string_view name = stored(stored_header.name_at, stored_header.name_size);
        std::string_view value = stored(stored_header.value_at, stored_header.value_size);
        if (compressed && stored_header.role == Role::accept_ranges) {
            continue;  // a Range request gets the identity's bytes, not ranges of these
        }
        if (compressed && stored_header.role == Role::etag && !value.starts_with("W/")) {
            // Other bytes than the identity's, the same meaning: a weak
            // validator (RFC 9110 8.8.1), as nginx makes it.
            changed.assign("W/").append(value);
            value = changed;
        } else if (!vary_done && stored_header.role == Role::vary) {
            changed.assign(value).append(", Accept-Encoding");
            value = changed;
            vary_done = true;
        }
        client_->add_header(name, value);  // copied into the head at once
    }
    if (!vary_done) client_->add_header("Vary", "Accept-Encoding");
}

void CompressingExchange::commit_stream() {
    Treatment treatment = decide();
    if (treatment == Treatment::compress) {
        encoder_ = make_encoder(*coding_, filter_.config().level(*coding_), InputSize::stream(length_),
                                &filter_.memory());
        if (encoder_) {
            block_ = filter_.blocks().acquire();
            phase_ = Phase::compressing;
            // A compressing stream always hears the connection: a drained
            // block, or a client gone while it still holds input.
            client_->set_listener(this);
            commit_compressed(std::nullopt);
            return;
        }
        log::error("no memory for a {} encoder; {} goes out uncompressed",
                   config::coding_name(*coding_), request().target);
    }
    commit_as_is(treatment != Treatment::as_is);
}

// ---- a body sent whole ---------------------------------------------------

void CompressingExchange::send_whole(WholeBody body) {
    Treatment treatment = decide();
    uint64_t size = body.fd >= 0 ? body.length : body.bytes.size();
    bool too_large = size > max_whole_body;  // for this worker's loop: always sent as it is
    std::shared_ptr<const std::string> compressed;
    bool cached = false;
    if (treatment == Treatment::compress && !too_large) compressed = compressed_whole(body, cached);
    if (!compressed) {
        commit_as_is(treatment != Treatment::as_is && !too_large);
        pass_whole(std::move(body));
        return;
    }
    commit_compressed(compressed->size());
    phase_ = Phase::as_is;  // the handler's end_response ends it
    filter_.count(*coding_, size, compressed->size(), cached);
    std::string_view bytes = *compressed;
    client_->send_owned_body(bytes, std::move(compressed));
}

std::shared_ptr<const std::string> CompressingExchange::compressed_whole(const WholeBody& body,
                                                                        bool& cached) {
    int level = filter_.config().level(*coding_);
    CompressedCache::Key key{body.owner.get(),
                             body.fd >= 0 ? static_cast<uint64_t>(body.offset)
                                          : reinterpret_cast<uintptr_t>(body.bytes.data()),
                             body.fd >= 0 ? body.length : body.bytes.size(), *coding_, level};
    if (std::shared_ptr<const std::string> kept = filter_.cache().find(key)) {
        cached = true;
        return kept;
    }
    std::string file_bytes;
    std::string_view source = body.bytes;
    if (body.fd >= 0) {
        file_bytes.resize(body.length);
        if (!read_range(body.fd, file_bytes.data(), body.length, body.offset)) return nullptr;
        source = file_bytes;
    }
    std::optional<std::string> compressed = compress_whole(*coding_, level, source);
    if (!compressed) {
        log::error("{} compression of {} failed; it goes out uncompressed",
                   config::coding_name(*coding_), request().target);
        return nullptr;
    }
    auto bytes = std::make_shared<const std::string>(std::move(*compressed));
    filter_.cache().insert(key, body.owner, bytes);
    return bytes;
}

void CompressingExchange::pass_whole(WholeBody body) {
    if (body.fd >= 0) client_->send_file(body.fd, body.offset, body.length, std::move(body.owner));
    else client_->send_owned_body(body.bytes, std::move(body.owner));
}

// ---- the body ------------------------------------------------------------

void CompressingExchange::send_body(std::string_view bytes) { send_body_pieces({&bytes, 1}, false); }

void CompressingExchange::send_body_pieces(std::span<const std::string_view> pieces, bool last) {
    Guard guard(*this);
    if (phase_ == Phase::head) commit_stream();
    if (phase_ == Phase::compressing) {
        take(pieces, last);
    } else if (phase_ == Phase::as_is) {
        if (last) release();
        client_->send_body_pieces(pieces, last);
    }
}

void CompressingExchange::send_owned_body(std::string_view bytes, std::shared_ptr<const void> owner) {
    Guard guard(*this);
    if (phase_ == Phase::head && owner && length_ == bytes.size()) {
        send_whole({std::move(owner), bytes});
        return;
    }
    if (phase_ == Phase::head) commit_stream();
    if (phase_ == Phase::compressing) {
        owner_ = std::move(owner);
        take({&bytes, 1}, false);
    } else if (phase_ == Phase::as_is) {
        client_->send_owned_body(bytes, std::move(owner));
    }
}

void CompressingExchange::send_file(int fd, off_t offset, uint64_t length,
                                    std::shared_ptr<const void> owner) {
    Guard guard(*this);
    if (phase_ == Phase::head && owner && length_ == length) {
        send_whole({std::move(owner), {}, fd, offset, length});
        return;
    }
    if (phase_ == Phase::head) commit_stream();
    if (phase_ == Phase::as_is) client_->send_file(fd, offset, length, std::move(owner));
    // A file is compressed whole, as the first body call: none is ever sent
    // after other body bytes.
    else if (phase_ == Phase::compressing) fail("a file sent after other body bytes");
}

void CompressingExchange::hand_over_buffer(core::BufferPool& pool, char* block) {
    if (phase_ == Phase::as_is) {
        client_->hand_over_buffer(pool, block);
    } else if (phase_ == Phase::done) {
        pool.release(block);
    } else {
        handed_pool_ = &pool;
        handed_block_ = block;
    }
}

void CompressingExchange::end_response() {
    Guard guard(*this);
    if (phase_ == Phase::head) commit_stream();
    if (phase_ == Phase::compressing) {
        take({}, true);
    } else if (phase_ == Phase::as_is) {
        release();
        client_->end_response();
    }
}

void CompressingExchange::abort() {
    Guard guard(*this);
    if (phase_ == Phase::done) return;
    http::Exchange* client = client_;
    char* block = std::exchange(block_, nullptr);
    release();
    client->abort();
    // The connection is closed: its output, our block's bytes among it, is dropped.
    if (block) filter_.blocks().release(block);
}

void CompressingExchange::respond_text(int status, std::string_view body) {
    Guard guard(*this);
    char* block = std::exchange(block_, nullptr);
    release();
    client_->respond_text(status, body);  // a short text: never worth compressing
    // Either nothing of ours was queued, or the response had begun and the
    // connection closed, dropping its output: our block is free.
    if (block) filter_.blocks().release(block);
}

void CompressingExchange::switch_protocols() {
    Guard guard(*this);
    if (phase_ == Phase::head) commit_as_is(false);
    if (phase_ == Phase::as_is) client_->switch_protocols();
}

void CompressingExchange::set_listener(http::ExchangeListener* listener) {
    listener_ = listener;
    if (phase_ == Phase::done) return;
    client_->set_listener(listener || phase_ == Phase::compressing ? this : nullptr);
}

bool CompressingExchange::output_pending() const {
    if (phase_ == Phase::compressing) return !pending_.empty() || client_->output_pending();
    return phase_ != Phase::done && client_->output_pending();
}

// ---- the stream ----------------------------------------------------------

void CompressingExchange::take(std::span<const std::string_view> pieces, bool last) {
    for (std::string_view piece : pieces) {
        if (piece.empty()) continue;
        pending_.push_back(piece);
        bytes_in_ += piece.size();
    }
    hold_flush_ = std::exchange(more_expected_, false) && !last;
    if (last) {
        finishing_ = true;
        // The handler is done with its exchange (it may be gone already):
        // what happens to the tail from here is no longer its business.
        listener_ = nullptr;
    }
    pump();
}

void CompressingExchange::flush_body() {
    Guard guard(*this);
    if (phase_ != Phase::compressing) return;
    hold_flush_ = false;
    pump();
}

// Compresses what is pending into the block and sends it, a block at a
// time, for as long as the client takes it at once. The block is reused
// only once the client's output is empty, so the stream's output never
// takes more than one block; what is left waits for on_output_drained.
void CompressingExchange::pump() {
    const size_t block_size = filter_.blocks().block_size();
    while (phase_ == Phase::compressing) {
        // Taken and flushed, or taken and more follows at once.
        if (pending_.empty() && !finishing_ && (!flush_owed_ || hold_flush_)) return;
        if (client_->output_pending()) return;  // on_output_drained goes on
        std::span<char> room(block_, block_size);
        bool complete = compress_pending(room);
        std::string_view piece(block_, block_size - room.size());
        if (encoder_->failed() || (!complete && piece.empty())) {
            fail(encoder_->failed() ? "the encoder failed" : "the encoder made no progress");
            return;
        }
        bytes_out_ += piece.size();
        if (complete) {
            // The input is all taken: its bytes may go.
            flush_owed_ = hold_flush_;
            pending_.clear();
            next_piece_ = 0;
            owner_.reset();
            if (handed_block_)
                std::exchange(handed_pool_, nullptr)->release(std::exchange(handed_block_, nullptr));
            if (finishing_) {
                finish_stream(piece);
                return;
            }
        }
        if (!piece.empty()) client_->send_body_pieces({&piece, 1}, false);
    }
}

// True once every pending piece is taken and flushed (or, finishing, the
// stream ended); false when `room` filled first.
bool CompressingExchange::compress_pending(std::span<char>& room) {
    std::string_view nothing;
    for (;;) {
        bool last = next_piece_ + 1 >= pending_.size();
        std::string_view& input = next_piece_ < pending_.size() ? pending_[next_piece_] : nothing;
        // One flush per send, after its last piece: the client can decode
        // everything sent so far, however little (an event of a stream).
        // Not when more follows at once: it would only cost CPU and bytes
        // (nginx's brotli and gzip flush only at the end).
        StreamEncoder::Mode mode = !last        ? StreamEncoder::Mode::take
                                   : finishing_  ? StreamEncoder::Mode::finish
                                   : hold_flush_ ? StreamEncoder::Mode::take
                                                 : StreamEncoder::Mode::flush;
        // A flush the room cut short is finished first, even when more
        // pieces came since: brotli takes no new input in the middle of one.
        if (flush_unfinished_ && mode == StreamEncoder::Mode::take) mode = StreamEncoder::Mode::flush;
        bool done = encoder_->compress(input, room, mode);
        flush_unfinished_ = !done && mode == StreamEncoder::Mode::flush;
        if (!done) return false;
        if (last) return true;
        ++next_piece_;
    }
}

void CompressingExchange::finish_stream(std::string_view last_piece) {
    http::Exchange* client = client_;
    char* block = std::exchange(block_, nullptr);
    filter_.count(*coding_, bytes_in_, bytes_out_, false);
    release();
    // The last bytes are in our block, which a slow client may still be
    // reading when this exchange serves another request: the connection
    // gives it back to the pool once they are out.
    client->hand_over_buffer(filter_.blocks(), block);
    client->send_body_pieces({&last_piece, 1}, true);
}

void CompressingExchange::fail(const char* what) {
    log::error("compressing the response to {} failed: {}; closing the connection",
               request().target, what);
    http::ExchangeListener* listener = listener_;
    abort();
    // abort() ends the connection without telling a listener: the handler
    // learns here that its exchange is gone.
    if (listener) listener->on_client_gone();
}

void CompressingExchange::release() {
    phase_ = Phase::done;
    listener_ = nullptr;
    encoder_.reset();
    pending_.clear();
    next_piece_ = 0;
    finishing_ = false;
    flush_unfinished_ = false;
    more_expected_ = hold_flush_ = flush_owed_ = false;
    owner_.reset();
    if (handed_block_)
        std::exchange(handed_pool_, nullptr)->release(std::exchange(handed_block_, nullptr));
}

// ---- the client connection's events --------------------------------------

bool CompressingExchange::on_request_body(std::string_view data) {
    Guard guard(*this);
    return listener_ ? listener_->on_request_body(data) : true;
}

void CompressingExchange::on_request_complete() {
    Guard guard(*this);
    if (listener_) listener_->on_request_complete();
}

void CompressingExchange::on_output_drained() {
    Guard guard(*this);
    if (phase_ == Phase::compressing) {
        pump();
        // The handler hears it once its bytes are all taken and written.
        if (phase_ != Phase::compressing || output_pending()) return;
    }
    if (listener_) listener_->on_output_drained();
}

void CompressingExchange::on_client_gone() {
    Guard guard(*this);
    http::ExchangeListener* listener = listener_;
    release();
    // The connection dropped its output: our block is free.
    if (block_) filter_.blocks().release(std::exchange(block_, nullptr));
    if (listener) listener->on_client_gone();
}

}  // namespace portico::compress
