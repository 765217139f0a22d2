#include "transport/output_queue.hpp"

#include <sys/sendfile.h>
#include <sys/socket.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace portico::transport {

namespace {
constexpr size_t max_iovecs = 16;
}  // namespace

void OutputQueue::move_front_to(OutputQueue& to, uint64_t bytes) {
    while (bytes > 0) {
        Piece& piece = pieces_[first_];
        uint64_t take = std::min(bytes, piece.length);
        to.append({piece.data, piece.fd, piece.offset, take});
        consume(take, false);
        bytes -= take;
    }
    if (empty()) clear();
}

void OutputQueue::clear() {
    pieces_.clear();
    first_ = 0;
    pending_bytes_ = 0;
}

OutputQueue::FlushResult OutputQueue::flush(int socket_fd, uint64_t& sent) {
    uint64_t sent_before = sent;
    while (!empty()) {
        FlushResult result = pieces_[first_].data != nullptr ? flush_memory(socket_fd, sent)
                                                             : flush_file(socket_fd, sent);
        if (result != FlushResult::done) return result;
        // A fast reader of a large file yields to the other connections; the
        // socket is still writable, so the loop comes back at once.
        if (!empty() && sent - sent_before >= max_bytes_per_flush) return FlushResult::would_block;
    }
    clear();
    return FlushResult::done;
}

OutputQueue::FlushResult OutputQueue::flush_memory(int socket_fd, uint64_t& sent) {
    iovec vectors[max_iovecs];
    size_t count = 0;
    for (size_t i = first_; i < pieces_.size() && count < max_iovecs && pieces_[i].data; ++i)
        vectors[count++] = {const_cast<char*>(pieces_[i].data), pieces_[i].length};
    ssize_t written;
    do {
        written = ::writev(socket_fd, vectors, static_cast<int>(count));
    } while (written < 0 && errno == EINTR);
    if (written < 0) return errno == EAGAIN ? FlushResult::would_block : FlushResult::failed;
    uint64_t asked = 0;
    for (size_t i = 0; i < count; ++i) asked += vectors[i].iov_len;
    consume(static_cast<uint64_t>(written));
    sent += static_cast<uint64_t>(written);
    return static_cast<uint64_t>(written) < asked ? FlushResult::would_block : FlushResult::done;
}

OutputQueue::FlushResult OutputQueue::flush_file(int socket_fd, uint64_t& sent) {
    Piece& piece = pieces_[first_];
    off_t offset = piece.offset;
    size_t chunk = static_cast<size_t>(std::min(piece.length, max_sendfile_chunk));
    ssize_t written;
    do {
        written = ::sendfile(socket_fd, piece.fd, &offset, chunk);
    } while (written < 0 && errno == EINTR);
    if (written < 0) return errno == EAGAIN ? FlushResult::would_block : FlushResult::failed;
    // 0 means the file shrank under us: the promised length can't be sent.
    if (written == 0) return FlushResult::failed;
    consume(static_cast<uint64_t>(written));
    sent += static_cast<uint64_t>(written);
    return static_cast<size_t>(written) < chunk ? FlushResult::would_block : FlushResult::done;
}

size_t OutputQueue::stage(char* staging, size_t staging_size) const {
    size_t filled = 0;
    for (size_t i = first_; i < pieces_.size() && filled < staging_size; ++i) {
        const Piece& piece = pieces_[i];
        size_t take = static_cast<size_t>(std::min<uint64_t>(piece.length, staging_size - filled));
        if (piece.data) {
            std::memcpy(staging + filled, piece.data, take);
        } else {
            ssize_t got;
            do {
                got = ::pread(piece.fd, staging + filled, take, piece.offset);
            } while (got < 0 && errno == EINTR);
            if (got <= 0) return filled;  // sent up to here; the next call fails
            take = static_cast<size_t>(got);
            if (take < piece.length && filled + take < staging_size) return filled + take;
        }
        filled += take;
    }
    return filled;
}

void OutputQueue::consume(uint64_t bytes, bool written) {
    pending_bytes_ -= bytes;
    while (bytes > 0) {
        Piece& piece = pieces_[first_];
        uint64_t take = std::min(bytes, piece.length);
        piece.length -= take;
        if (piece.data) {
            piece.data += take;
        } else {
            piece.offset += static_cast<off_t>(take);
            if (written) file_bytes_sent_ += take;
        }
        bytes -= take;
        if (piece.length == 0) ++first_;
    }
}

}  // namespace portico::transport
