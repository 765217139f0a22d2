#include "tls/record_writer.hpp"

#include <algorithm>
#include <cerrno>

namespace portico::tls {

namespace {

using FlushResult = transport::OutputQueue::FlushResult;

// The largest TLS record's plaintext.
constexpr size_t tls_record = 16 * 1024;

}  // namespace

FlushResult write_records(TlsStream& stream, transport::OutputQueue& output, uint64_t& sent,
                          char* staging) {
    using Queue = transport::OutputQueue;
    auto blocked_or_failed = [](ssize_t result) {
        return result < 0 && errno == EAGAIN ? FlushResult::would_block : FlushResult::failed;
    };
    auto send = [&stream] {
        TlsStream::Step step = stream.send_gathered();
        return step == TlsStream::Step::done      ? FlushResult::done
               : step == TlsStream::Step::blocked ? FlushResult::would_block
                                                  : FlushResult::failed;
    };
    // Records the socket did not take last time go before any new one (and
    // records held back on purpose go with the new ones, in one write).
    if (stream.has_unsent()) {
        if (FlushResult result = send(); result != FlushResult::done) return result;
    }
    uint64_t sent_before = sent;
    while (!output.empty()) {
        const Queue::Piece& front = output.front();
        if (!front.data && stream.kernel_sends()) {
            size_t chunk = static_cast<size_t>(std::min(front.length, Queue::max_sendfile_chunk));
            ssize_t written = stream.send_file(front.fd, front.offset, chunk);
            if (written <= 0) return blocked_or_failed(written);
            output.consume(static_cast<uint64_t>(written));
            sent += static_cast<uint64_t>(written);
            continue;
        }
        // At most a staging buffer's worth of records per write(2), so what
        // a slow reader leaves unsent stays that small. A large memory piece
        // is encrypted from where it is; the rest is staged first. Either
        // way the bytes are the queue's front: with kernel TLS, where a
        // record write can block, the retry passes the same leading bytes.
        const char* bytes = front.data;
        size_t length = static_cast<size_t>(std::min<uint64_t>(front.length, record_staging_size));
        if (!bytes || length < tls_record) {
            length = output.stage(staging, record_staging_size);
            if (length == 0) return FlushResult::failed;
            bytes = staging;
        }
        for (size_t done = 0; done < length;) {
            ssize_t written = stream.write(bytes + done, std::min(tls_record, length - done));
            if (written <= 0) return blocked_or_failed(written);
            output.consume(static_cast<uint64_t>(written));
            sent += static_cast<uint64_t>(written);
            done += static_cast<size_t>(written);
        }
        if (output.empty()) stream.add_close_notify();
        if (FlushResult result = send(); result != FlushResult::done) return result;
        if (!output.empty() && sent - sent_before >= Queue::max_bytes_per_flush)
            return FlushResult::would_block;
    }
    output.clear();
    return FlushResult::done;
}

}  // namespace portico::tls
