#include "compress/compression_stream.hpp"

#include <unistd.h>

#include <cerrno>
#include <utility>

#include "http/accept_encoding.hpp"
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

bool only_a_block_or_flush(const http::BodyPart& part) {
    return part.kind == http::BodyPart::Kind::memory && part.pieces.empty() && !part.last;
}

}  // namespace

bool CompressionStream::start(const http::Request& request) {
    // Never compressed, whatever the response: HEAD (no body), a Range
    // request (its offsets count the identity's bytes: it gets them), an
    // upgrade (a tunnel carries no body to encode). Such a request costs
    // nothing more than on a location without compress.
    http::CompressibleRequest compressible = http::compressible_request(request);
    if (!compressible.compressible) return false;
    coding_ = http::negotiate_coding(compressible.accept_encoding, config::CodingSet::all());
    phase_ = Phase::held;
    head_ = nullptr;
    bytes_in_ = bytes_out_ = 0;
    return true;
}

// ---- the head ------------------------------------------------------------

CompressionStream::Role CompressionStream::role_of(std::string_view name) {
    // By length first: one comparison at most per header, on every request.
    auto is = [name](std::string_view lowercase) {
        return http::equals_ignore_case_same_size(name.data(), lowercase.data(), name.size());
    };
    switch (name.size()) {
    case 4:
        return is("etag") ? Role::etag : is("vary") ? Role::vary : Role::other;
    case 12:
        return is("content-type") ? Role::content_type : Role::other;
    case 13:
        return is("cache-control")   ? Role::cache_control
               : is("accept-ranges") ? Role::accept_ranges
                                     : Role::other;
    case 16:
        return is("content-encoding") ? Role::content_encoding : Role::other;
    default:
        return Role::other;
    }
}

std::string_view CompressionStream::value_of(Role role) const {
    for (size_t index = 0; index < roles_.size(); ++index)
        if (roles_[index] == role) return head_->fields.value(index);
    return {};
}

void CompressionStream::head(http::HeadersOut& head) {
    head_ = &head;
    roles_.clear();
    for (size_t index = 0; index < head.fields.size(); ++index)
        roles_.push_back(role_of(head.fields.name(index)));
    ResponseFacts facts{head.status, head.length, value_of(Role::content_type),
                        value_of(Role::content_encoding), value_of(Role::cache_control)};
    Treatment treatment = treatment_for(facts, filter_.config(), coding_.has_value());
    // To compress: whole or as a stream, which the first body part tells.
    if (treatment == Treatment::compress) return;
    commit_as_is(treatment == Treatment::vary_only);
}

void CompressionStream::add_vary() {
    http::HeaderList& fields = head_->fields;
    size_t first_vary = fields.size();
    for (size_t index = 0; index < fields.size(); ++index) {
        if (roles_[index] != Role::vary) continue;
        if (vary_covers_accept_encoding(fields.value(index))) return;
        if (first_vary == fields.size()) first_vary = index;
    }
    if (first_vary == fields.size()) {
        fields.add_lasting("Vary", "Accept-Encoding");
        roles_.push_back(Role::vary);
        return;
    }
    scratch_.assign(fields.value(first_vary)).append(", Accept-Encoding");
    fields.set_value(first_vary, scratch_);
}

void CompressionStream::commit_as_is(bool vary) {
    phase_ = Phase::as_is;
    if (vary) add_vary();
    next().head(*head_);
    if (handed_block_) {
        http::BodyPart block;
        block.block_pool = std::exchange(handed_pool_, nullptr);
        block.block = std::exchange(handed_block_, nullptr);
        next().body(block);
    }
}

void CompressionStream::commit_compressed(std::optional<uint64_t> compressed_length) {
    http::HeaderList& fields = head_->fields;
    // Without a length the connection frames the body: chunks on HTTP/1.1,
    // the close on HTTP/1.0.
    head_->length = compressed_length;
    for (size_t index = fields.size(); index-- > 0;) {
        if (roles_[index] == Role::accept_ranges) {
            // A Range request gets the identity's bytes, not ranges of these.
            fields.remove(index);
            roles_.erase(roles_.begin() + static_cast<std::ptrdiff_t>(index));
        } else if (roles_[index] == Role::etag && !fields.value(index).starts_with("W/")) {
            // Other bytes than the identity's, the same meaning: a weak
            // validator (RFC 9110 8.8.1), as nginx makes it.
            scratch_.assign("W/").append(fields.value(index));
            fields.set_value(index, scratch_);
        }
    }
    add_vary();
    fields.add_lasting("Content-Encoding", config::coding_name(*coding_));
    next().head(*head_);
}

void CompressionStream::commit_stream() {
    encoder_ = make_encoder(*coding_, filter_.config().level(*coding_),
                            InputSize::stream(head_->length), &filter_.memory());
    if (encoder_) {
        block_ = filter_.blocks().acquire();
        phase_ = Phase::compressing;
        // A compressing stream always hears the connection: a drained
        // block, or a client gone while it still holds input.
        next().listen();
        commit_compressed(std::nullopt);
        return;
    }
    log::error("no memory for a {} encoder; {} goes out uncompressed",
               config::coding_name(*coding_), next().request().target);
    commit_as_is(true);
}

// ---- a body sent whole ---------------------------------------------------

void CompressionStream::send_whole(http::BodyPart& body) {
    uint64_t size = body.size();
    bool too_large = size > max_whole_body;  // for this worker's loop: always sent as it is
    std::shared_ptr<const std::string> compressed;
    bool cached = false;
    if (!too_large) compressed = compressed_whole(body, cached);
    if (!compressed) {
        commit_as_is(!too_large);
        if (body.last) release();
        next().body(body);
        return;
    }
    commit_compressed(compressed->size());
    phase_ = Phase::as_is;  // the handler's end ends it
    filter_.count(*coding_, size, compressed->size(), cached);
    std::string_view bytes = *compressed;
    http::BodyPart whole;
    whole.kind = http::BodyPart::Kind::owned;
    whole.pieces = {&bytes, 1};
    whole.owner = std::move(compressed);
    whole.last = body.last;
    if (whole.last) release();
    next().body(whole);
}

std::shared_ptr<const std::string> CompressionStream::compressed_whole(const http::BodyPart& body,
                                                                       bool& cached) {
    int level = filter_.config().level(*coding_);
    bool file = body.kind == http::BodyPart::Kind::file;
    std::string_view source = file ? std::string_view() : body.pieces.front();
    CompressedCache::Key key{
        body.owner.get(),
        file ? static_cast<uint64_t>(body.offset) : reinterpret_cast<uintptr_t>(source.data()),
        body.size(), *coding_, level};
    if (std::shared_ptr<const std::string> kept = filter_.cache().find(key)) {
        cached = true;
        return kept;
    }
    std::string file_bytes;
    if (file) {
        file_bytes.resize(body.length);
        if (!read_range(body.fd, file_bytes.data(), body.length, body.offset)) return nullptr;
        source = file_bytes;
    }
    std::optional<std::string> compressed = compress_whole(*coding_, level, source);
    if (!compressed) {
        log::error("{} compression of {} failed; it goes out uncompressed",
                   config::coding_name(*coding_), next().request().target);
        return nullptr;
    }
    auto bytes = std::make_shared<const std::string>(std::move(*compressed));
    filter_.cache().insert(key, body.owner, bytes);
    return bytes;
}

// ---- the body ------------------------------------------------------------

void CompressionStream::keep_block(http::BodyPart& part) {
    if (!part.block) return;
    handed_pool_ = part.block_pool;
    handed_block_ = std::exchange(part.block, nullptr);
}

void CompressionStream::body(http::BodyPart& part) {
    if (phase_ == Phase::held) {
        if (part.kind != http::BodyPart::Kind::memory && part.owner &&
            head_->length == part.size()) {
            send_whole(part);
            return;
        }
        // A handed block, or a flush: nothing to decide on yet.
        if (only_a_block_or_flush(part)) {
            keep_block(part);
            return;
        }
        commit_stream();
    }
    switch (phase_) {
    case Phase::as_is:
        if (part.last) release();
        next().body(part);
        return;
    case Phase::compressing:
        keep_block(part);
        if (part.flush) {
            hold_flush_ = false;
            pump();
        } else if (only_a_block_or_flush(part)) {
            // Its bytes were sent before: given back once they are taken.
        } else if (part.kind == http::BodyPart::Kind::file) {
            // A file is compressed whole, as the first body part: none is
            // ever sent after other body bytes.
            fail("a file sent after other body bytes");
        } else {
            if (part.kind == http::BodyPart::Kind::owned) owner_ = std::move(part.owner);
            take(part.pieces, part.last, part.more_expected);
        }
        return;
    case Phase::held:
    case Phase::done:
        if (part.block) part.block_pool->release(part.block);
        return;
    }
}

void CompressionStream::end() {
    if (phase_ == Phase::held) commit_stream();
    if (phase_ == Phase::compressing) {
        take({}, true, false);
    } else if (phase_ == Phase::as_is) {
        release();
        next().end();
    }
}

void CompressionStream::abort() {
    release();
    // The connection dropped its output (or is closing): our block is free.
    if (block_) filter_.blocks().release(std::exchange(block_, nullptr));
}

void CompressionStream::on_output_drained() {
    if (phase_ == Phase::compressing) pump();
}

// ---- the stream ----------------------------------------------------------

void CompressionStream::take(std::span<const std::string_view> pieces, bool last,
                             bool more_expected) {
    for (std::string_view piece : pieces) {
        if (piece.empty()) continue;
        pending_.push_back(piece);
        bytes_in_ += piece.size();
    }
    hold_flush_ = more_expected && !last;
    if (last) finishing_ = true;
    pump();
}

// Compresses what is pending into the block and sends it, a block at a
// time, for as long as the client takes it at once. The block is reused
// only once the client's output is empty, so the stream's output never
// takes more than one block; what is left waits for on_output_drained.
void CompressionStream::pump() {
    const size_t block_size = filter_.blocks().block_size();
    while (phase_ == Phase::compressing) {
        // Taken and flushed, or taken and more follows at once.
        if (pending_.empty() && !finishing_ && (!flush_owed_ || hold_flush_)) return;
        if (next().pending()) return;  // on_output_drained goes on
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
                std::exchange(handed_pool_, nullptr)
                    ->release(std::exchange(handed_block_, nullptr));
            if (finishing_) {
                finish_stream(piece);
                return;
            }
        }
        if (!piece.empty()) {
            http::BodyPart out;
            out.pieces = {&piece, 1};
            next().body(out);
        }
    }
}

// True once every pending piece is taken and flushed (or, finishing, the
// stream ended); false when `room` filled first.
bool CompressionStream::compress_pending(std::span<char>& room) {
    std::string_view nothing;
    for (;;) {
        bool last = next_piece_ + 1 >= pending_.size();
        std::string_view& input = next_piece_ < pending_.size() ? pending_[next_piece_] : nothing;
        // One flush per send, after its last piece: the client can decode
        // everything sent so far, however little (an event of a stream).
        // Not when more follows at once: it would only cost CPU and bytes
        // (nginx's brotli and gzip flush only at the end).
        StreamEncoder::Mode mode = !last         ? StreamEncoder::Mode::take
                                   : finishing_  ? StreamEncoder::Mode::finish
                                   : hold_flush_ ? StreamEncoder::Mode::take
                                                 : StreamEncoder::Mode::flush;
        // A flush the room cut short is finished first, even when more
        // pieces came since: brotli takes no new input in the middle of one.
        if (flush_unfinished_ && mode == StreamEncoder::Mode::take)
            mode = StreamEncoder::Mode::flush;
        bool done = encoder_->compress(input, room, mode);
        flush_unfinished_ = !done && mode == StreamEncoder::Mode::flush;
        if (!done) return false;
        if (last) return true;
        ++next_piece_;
    }
}

void CompressionStream::finish_stream(std::string_view last_piece) {
    char* block = std::exchange(block_, nullptr);
    filter_.count(*coding_, bytes_in_, bytes_out_, false);
    release();
    // The last bytes are in our block, which a slow client may still be
    // reading when this stream serves another response: it goes with them,
    // and the connection gives it back to the pool once they are out. The
    // last data and the end leave together.
    http::BodyPart out;
    out.pieces = {&last_piece, 1};
    out.block_pool = &filter_.blocks();
    out.block = block;
    out.last = true;
    next().body(out);
}

void CompressionStream::fail(const char* what) {
    log::error("compressing the response to {} failed: {}; closing the connection",
               next().request().target, what);
    char* block = std::exchange(block_, nullptr);
    release();
    next().abort();
    // The connection is closed: its output, our block's bytes among it, is dropped.
    if (block) filter_.blocks().release(block);
}

void CompressionStream::release() {
    phase_ = Phase::done;
    encoder_.reset();
    pending_.clear();
    next_piece_ = 0;
    finishing_ = false;
    flush_unfinished_ = false;
    hold_flush_ = flush_owed_ = false;
    owner_.reset();
    if (handed_block_)
        std::exchange(handed_pool_, nullptr)->release(std::exchange(handed_block_, nullptr));
}

}  // namespace portico::compress
