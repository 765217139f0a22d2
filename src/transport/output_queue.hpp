// What a connection still has to send: memory pieces (a response head, a
// fixed body, proxied bytes) and file ranges (sendfile(2)), in order.
//
// flush() writes as much as the socket takes right now: consecutive memory
// pieces go out in one writev(2), so a head and a small body cost one system
// call; a file range goes out with sendfile(2), which copies in the kernel.
// It stops at EAGAIN, and the connection waits for writability.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <vector>
#include <string_view>

namespace portico::transport {

class OutputQueue {
public:
    // The bytes must stay valid until they are sent or the queue is cleared.
    // (Inline, like append: a response pushes several pieces.)
    void push_memory(std::string_view bytes) {
        if (!bytes.empty()) append({bytes.data(), -1, 0, bytes.size()});
    }
    // The descriptor must stay open until the range is sent or the queue is cleared.
    void push_file(int fd, off_t offset, uint64_t length) {
        if (length != 0) append({nullptr, fd, offset, length});
    }

    // Moves the first `bytes` (at most pending_bytes()) to the end of `to`,
    // splitting a piece where they end: an HTTP/2 stream's body goes into
    // its connection's output one DATA frame at a time.
    void move_front_to(OutputQueue& to, uint64_t bytes);

    enum class FlushResult { done, would_block, failed };
    // `sent` adds the bytes written by this call.
    FlushResult flush(int socket_fd, uint64_t& sent);

    // One sendfile call, and one flush, at most this much, so one fast
    // client of a large file cannot hold the loop for long. 2 MiB as
    // nginx's sendfile_max_chunk (its default since 1.21.4): at 1 MiB a 10
    // MiB response took 10 sendfile calls and 13 epoll_wait (ab -k -c10,
    // strace); at 2 MiB 6 and 6, 41 % fewer system calls per request. One
    // 2 MiB sendfile holds the loop about 0.17 ms here (strace -c; 0.11 ms
    // at 1 MiB).
    static constexpr uint64_t max_sendfile_chunk = 2 << 20;
    static constexpr uint64_t max_bytes_per_flush = 2 << 20;

    // For a transport that writes the queue its own way (TLS records: see
    // tls/tls_transport.cpp): the front piece, a copy of the front, and
    // the bytes it wrote leaving the queue.
    struct Piece {
        const char* data;  // nullptr for a file range
        int fd;
        off_t offset;
        uint64_t length;
    };
    const Piece& front() const { return pieces_[first_]; }
    // Copies the queue's front into `staging` without consuming it; 0 when
    // a file range could not be read (it shrank under us).
    size_t stage(char* staging, size_t staging_size) const;
    // The first `bytes` leave the queue: `written`, or moved elsewhere
    // (then not counted in file_bytes_sent).
    void consume(uint64_t bytes, bool written = true);

    bool empty() const { return first_ == pieces_.size(); }
    // Bytes of file ranges sent so far, for the counters.
    uint64_t file_bytes_sent() const { return file_bytes_sent_; }
    uint64_t pending_bytes() const { return pending_bytes_; }
    void clear();

private:
    void append(const Piece& piece) {
        pieces_.push_back(piece);
        pending_bytes_ += piece.length;
    }
    FlushResult flush_memory(int socket_fd, uint64_t& sent);
    FlushResult flush_file(int socket_fd, uint64_t& sent);

    // A vector read from `first_` rather than a deque: an empty vector owns no
    // memory, which keeps an idle connection small.
    std::vector<Piece> pieces_;
    size_t first_ = 0;
    uint64_t pending_bytes_ = 0;
    uint64_t file_bytes_sent_ = 0;
};

}  // namespace portico::transport
