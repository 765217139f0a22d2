#include "tls/tls_transport.hpp"

#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include <algorithm>
#include <cerrno>
#include <string_view>

#include "core/log.hpp"
#include "tls/record_writer.hpp"

namespace portico::tls {

namespace {

using FlushResult = transport::OutputQueue::FlushResult;

// What a plain HTTP request sent to a TLS port gets, in clear text.
constexpr std::string_view plain_http_body = "This port speaks HTTPS: use an https:// URL.\n";
constexpr std::string_view plain_http_response =
    "HTTP/1.1 400 Bad Request\r\n"
    "Content-Type: text/plain; charset=utf-8\r\n"
    "Content-Length: 45\r\n"
    "Connection: close\r\n"
    "\r\n"
    "This port speaks HTTPS: use an https:// URL.\n";
static_assert(plain_http_response.ends_with(plain_http_body) && plain_http_body.size() == 45);

transport::Transport::Step step_of(TlsStream::Step step) {
    switch (step) {
    case TlsStream::Step::done: return transport::Transport::Step::done;
    case TlsStream::Step::blocked: return transport::Transport::Step::blocked;
    case TlsStream::Step::failed: break;
    }
    return transport::Transport::Step::failed;
}

}  // namespace

std::unique_ptr<transport::Transport> WorkerTls::accept(int fd, uint16_t listener) {
    SSL* session = tls_.new_session(fd, listener);
    if (session == nullptr) {
        log::error("no memory for a TLS session; closing the connection");
        ::close(fd);
        return nullptr;
    }
    return std::make_unique<TlsTransport>(*this, session, fd);
}

TlsTransport::TlsTransport(WorkerTls& worker, SSL* ssl, int fd)
    : Transport(fd), worker_(worker), stream_(ssl, fd, worker.gather_), accepted_ns_(uv_hrtime()) {}

// ---- the handshake ----------------------------------------------------------

transport::Transport::Step TlsTransport::handshake() {
    TlsStream::Step step = stream_.handshake();
    if (step == TlsStream::Step::done)
        worker_.counters_.tls_handshake_finished(
            stream_.resumed() ? metrics::TlsHandshake::resumed : metrics::TlsHandshake::full,
            uv_hrtime() - accepted_ns_);
    if (step == TlsStream::Step::failed && stream_.plain_http_received()) return answer_plain_http();
    return step_of(step);
}

transport::Transport::Step TlsTransport::answer_plain_http() {
    worker_.counters_.tls_handshake_finished(metrics::TlsHandshake::failed, 0);
    refused_ = true;
    if (::write(fd_, plain_http_response.data(), plain_http_response.size()) < 0) return Step::failed;
    ::shutdown(fd_, SHUT_WR);
    return Step::refused;
}

transport::Transport::Step TlsTransport::send_held() {
    return refused_ ? Step::done : step_of(stream_.send_held());
}

// ---- data ---------------------------------------------------------------------

ssize_t TlsTransport::read(char* buffer, size_t size) {
    if (refused_) [[unlikely]] return ::read(fd_, buffer, size);
    return stream_.read(buffer, size);
}

FlushResult TlsTransport::write(transport::OutputQueue& output, uint64_t& sent) {
    return write_records(stream_, output, sent, worker_.staging_.get());
}

// ---- events -------------------------------------------------------------------

// During the handshake, the direction it waits for; after it, a read that
// waits for writability (or a write for readability) swaps in the other
// direction. Records OpenSSL read ahead, which epoll cannot see, are
// reported by the watcher itself.
int TlsTransport::poll_events(int events, bool output_blocked, core::IoWatcher& watcher) {
    if (refused_) return events;
    int unsent = stream_.has_unsent() ? core::io_writable : 0;
    if (!stream_.established())
        return (stream_.read_wants() ? stream_.read_wants() : core::io_readable) | unsent;
    events |= unsent;
    // Not readable meanwhile: the input stays unread (level-triggered epoll
    // would report it again and again).
    if (stream_.read_wants() == core::io_writable && (events & core::io_readable))
        events = (events & ~core::io_readable) | core::io_writable;
    if (output_blocked && stream_.write_wants() == core::io_readable)
        events = (events & ~core::io_writable) | core::io_readable;
    // Not after a read that wanted more: what OpenSSL holds then is part of
    // a record, and only the socket can complete it.
    if ((events & core::io_readable) && stream_.read_wants() != core::io_readable &&
        stream_.has_buffered_input())
        watcher.report_soon(core::io_readable);
    return events;
}

transport::Transport::Ready TlsTransport::on_socket_event(int events, bool output_blocked) {
    if (refused_) return {events, false, false};
    Ready ready;
    // Records a write gathered but the socket did not take go first.
    if ((events & core::io_writable) && stream_.has_unsent()) {
        if (stream_.send_gathered() == TlsStream::Step::failed) return {0, true, false};
        ready.repoll = !output_blocked;  // writability is no longer wanted
    }
    if (!stream_.established()) {
        ready.events = core::io_readable;  // the handshake goes on from the read
        return ready;
    }
    // A blocked write goes on whichever way the socket became ready; a
    // retry that is still blocked costs one failed write.
    if (output_blocked) ready.events |= core::io_writable;
    if ((events & core::io_readable) || stream_.read_wants() == core::io_writable)
        ready.events |= core::io_readable;
    return ready;
}

// ---- the end --------------------------------------------------------------------

void TlsTransport::shutdown_write() {
    if (!refused_) stream_.shutdown();
    Transport::shutdown_write();
}

void TlsTransport::close(bool peer_closed) {
    if (!refused_) {
        if (!stream_.established())
            worker_.counters_.tls_handshake_finished(metrics::TlsHandshake::failed, 0);
        else if (!peer_closed)
            stream_.shutdown();
    }
    Transport::close(peer_closed);
}

void TlsTransport::release_buffers() {
    if (stream_.established()) stream_.release_buffers();
}

}  // namespace portico::tls
