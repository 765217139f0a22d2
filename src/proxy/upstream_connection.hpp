// One TCP connection to an upstream server (TLS over it for an upstream with
// `tls`): the socket, its watcher in the
// worker's IoPoller (the same I/O design as client connections, so the proxy
// reads and writes with its own system calls and sees back-pressure
// exactly), and one timer. Whoever uses it (an exchange, or the idle pool)
// is its Owner and gets its events. Memory is freed at the end of the loop
// turn it closed in, after the turn's other events.
#pragma once

#include <sys/types.h>

#include <unistd.h>

#include <cstdint>
#include <memory>
#include <string>

#include "core/io_poller.hpp"
#include "core/lazy_timer.hpp"
#include "tls/upstream_tls.hpp"
#include "transport/output_queue.hpp"

namespace portico::proxy {

struct UpstreamServer;

class UpstreamConnection {
public:
    class Owner {
    public:
        // `events`: core::io_readable / io_writable (an error on the socket
        // reports both: the read, write or finish_connect() tells which).
        virtual void on_upstream_event(UpstreamConnection& connection, int events) = 0;
        virtual void on_upstream_timeout(UpstreamConnection& connection) = 0;

    protected:
        ~Owner() = default;
    };

    // Starts a non-blocking connect; nullptr (and `error`, an errno) when
    // even that fails. Wait for io_writable, then call finish_connect(),
    // then (secure()) handshake() until it is done.
    static UpstreamConnection* open(core::IoPoller& poller, UpstreamServer& server, int& error);

    // 0 when the connection is established, else the errno of the failure.
    int finish_connect();

    // ---- TLS (an upstream with `tls`); secure() is false for the others,
    // whose reads and writes go straight to the socket.
    bool secure() const { return tls_ != nullptr; }
    // Connected, and past the TLS handshake when there is one: the request
    // can go.
    bool ready() const { return connected && (!tls_ || tls_->established()); }
    // Goes on with the handshake of a connected socket; `blocked`: watch
    // handshake_wants().
    tls::TlsStream::Step handshake() { return tls_->handshake(); }
    int handshake_wants() const { return tls_->handshake_wants(); }
    std::string tls_failure() const { return tls_->failure(); }

    // Like read(2).
    ssize_t read(char* buffer, size_t size) {
        return tls_ ? tls_->read(buffer, size) : ::read(fd_, buffer, size);
    }
    // Input read from the socket already (TLS records read ahead).
    bool has_buffered_input() const { return tls_ && tls_->has_buffered_input(); }
    // Writes what the upstream takes of `output` now.
    transport::OutputQueue::FlushResult write(transport::OutputQueue& output, uint64_t& sent) {
        return tls_ ? tls_->write(output, sent) : output.flush(fd_, sent);
    }
    // Going to the idle pool: TLS buffers go back.
    void release_buffers() {
        if (tls_) tls_->release_buffers();
    }

    // Hands the events to `owner`: `events` says which are wanted (0: none).
    // Keep io_readable on between owners (pool, exchange): an unchanged set
    // costs no epoll_ctl, and a request on a pooled connection then costs no
    // epoll system call at all. False when epoll refused the socket (errno).
    bool watch(Owner* owner, int events);
    // Sends the ACK for what was read now instead of up to 40 ms later
    // (Linux delays it on a request-response connection). One system call:
    // for after a read that left a response incomplete, since an upstream
    // without TCP_NODELAY holds its next small write until that ACK (the
    // JDK's HttpServer writes head and body apart). Not sticky: per read.
    void acknowledge_now();
    void arm_timer(uint64_t timeout_ms);
    void stop_timer();
    void close();

    int fd() const { return fd_; }
    UpstreamServer& server() const { return server_; }
    bool connected = false;
    uint32_t requests = 0;  // exchanges completed on it: > 0 means reused

    // Place in the server's idle pool.
    UpstreamConnection* idle_next = nullptr;
    UpstreamConnection* idle_prev = nullptr;
    uint64_t keep_alive_ms = 0;  // how long it may idle, from the last response

private:
    UpstreamConnection(core::IoPoller& poller, UpstreamServer& server, int fd);
    ~UpstreamConnection();
    bool watch_secure(int events);
    static void on_io(void* connection, int events);
    static void on_timer(void* connection);
    static void release(void* closed);

    UpstreamServer& server_;
    int fd_;
    core::IoWatcher io_;
    core::LazyTimer timer_;
    Owner* owner_ = nullptr;
    bool closing_ = false;
    std::unique_ptr<tls::UpstreamSession> tls_;
};

}  // namespace portico::proxy
