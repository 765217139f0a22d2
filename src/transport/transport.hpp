// What a client connection reads and writes through: its socket, or TLS over
// it. nginx swaps a connection's recv/send/send_chain when SSL starts
// (src/event/ngx_event_openssl.c); H2O's h2o_socket_t does TLS inside the
// socket. Here the same: the protocols above (http1/, http2/) call this
// surface and never know which one they have, so neither codec branches on
// TLS.
//
// A transport owns its descriptor; the connection owns the transport and
// its poll registration (core::IoWatcher), and asks the transport which
// events to watch, since TLS may need the other direction (a read that
// waits for writability during renegotiation-free key updates, a write that
// waits for readability) or report input the socket will not (records
// OpenSSL read ahead).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <new>
#include <string_view>

#include "core/io_poller.hpp"
#include "core/small_blocks.hpp"
#include "transport/output_queue.hpp"

namespace portico::transport {

class Transport {
public:
    explicit Transport(int fd) : fd_(fd) {}
    virtual ~Transport();
    Transport(const Transport&) = delete;
    Transport& operator=(const Transport&) = delete;

    // One per connection: its memory is recycled (core/small_blocks.hpp).
    static void* operator new(size_t size) {
        if (void* block = core::small_blocks::allocate(size)) return block;
        throw std::bad_alloc();
    }
    static void operator delete(void* block) { core::small_blocks::release(block); }

    int fd() const { return fd_; }

    // The listener that accepted it (config::listeners_of's index) and that
    // listener's port, set by the worker at accept, for the requests' site
    // and $server_port.
    uint16_t listener = 0;
    uint16_t local_port = 0;

    // ---- before the protocol's first byte
    enum class Step {
        done,
        blocked,  // wait for poll_events()
        failed,
        // The peer spoke the wrong protocol and was answered in clear text
        // (TLS: a plain HTTP request); the connection lingers, then closes.
        refused,
    };
    virtual Step handshake() { return Step::done; }
    virtual bool established() const { return true; }
    // Output the handshake's end held back for the first response's write
    // (TLS 1.3 session tickets), sent now if no response took it along.
    virtual Step send_held() { return Step::done; }
    // The handshake chose HTTP/2 (ALPN).
    virtual bool negotiated_h2() const { return false; }

    // ---- data
    // Like read(2): bytes read, 0 at the end of the stream, -1 with errno.
    virtual ssize_t read(char* buffer, size_t size) = 0;
    // Input already read from the socket that it will not report again.
    virtual bool has_buffered_input() const { return false; }
    // Writes what the peer takes of `output` now; `sent` adds the bytes written.
    virtual OutputQueue::FlushResult write(OutputQueue& output, uint64_t& sent) = 0;

    // ---- events
    // The socket events to watch, given what the connection wants
    // (core::io_readable / io_writable; `output_blocked`: its output waits).
    virtual int poll_events(int wanted, bool output_blocked, core::IoWatcher& watcher) {
        (void)output_blocked;
        (void)watcher;
        return wanted;
    }
    // A socket event. The transport's own pending work goes first (TLS:
    // records the socket did not take); what is left for the connection
    // comes back.
    struct Ready {
        int events = 0;       // what the connection should act on
        bool failed = false;  // the transport failed: close
        bool repoll = false;  // what must be watched changed
    };
    virtual Ready on_socket_event(int events, bool output_blocked) {
        (void)output_blocked;
        return {events, false, false};
    }

    // ---- the end
    // The output being written ends the connection (TLS: close_notify goes
    // with its last records).
    virtual void close_after_output() {}
    // A lingering close: nothing more is written, input is still read.
    virtual void shutdown_write();
    // The connection closes now; `peer_closed`: the peer ended first.
    virtual void close(bool peer_closed);

    // ---- options
    // Between requests: the transport's own buffers go back (OpenSSL's).
    virtual void release_buffers() {}
    // TCP_CORK around a file; false when the transport gathers output
    // itself (TLS records) and a cork would only delay it.
    virtual bool set_cork(bool on);
    // Whether it is TLS, and which (for the access log); nullptr in clear text.
    virtual bool secure() const { return false; }
    virtual const char* tls_protocol() const { return nullptr; }
    virtual const char* tls_cipher() const { return nullptr; }
    // The server name the client's TLS hello asked for (SNI); "" without.
    virtual std::string_view server_name() const { return {}; }
    // Why the last call failed, for a debug log line ("" when unknown).
    virtual const char* failure() const { return ""; }

protected:
    int fd_;
};

// A plain TCP socket: read(2), writev(2) and sendfile(2) on it.
class Socket final : public Transport {
public:
    using Transport::Transport;
    ssize_t read(char* buffer, size_t size) override;
    OutputQueue::FlushResult write(OutputQueue& output, uint64_t& sent) override {
        return output.flush(fd_, sent);
    }
};

}  // namespace portico::transport
