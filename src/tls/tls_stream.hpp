// One client connection's TLS session, over its non-blocking socket.
//
// I/O design. Reads: OpenSSL reads the socket itself (a socket BIO) with
// read-ahead, so one read(2) takes every record that arrived; the
// connection's IoWatcher says when to try again, as for a cleartext socket.
// The one thing epoll cannot see is what OpenSSL already holds (read-ahead
// took more records than the connection had room for): has_buffered_input()
// says so, and the connection asks its watcher to report the socket
// readable again (IoWatcher::report_soon).
//
// Writes: OpenSSL's records are gathered in the worker's WriteGather (a BIO
// of ours that only appends) and sent by send_gathered() with one writev(2),
// however many records a flush made: a 100 KiB response is 7 records, and
// with OpenSSL writing the socket itself it would be 7 system calls (nginx's
// ssl_buffer_size has the same cost). What the socket does not take is kept
// by the stream (unsent) and goes first next time; the connection waits
// for writability meanwhile. Memory BIOs for both directions were the
// alternative: they would cost a copy of every byte read as well.
//
// With kernel TLS (the kernel encrypts, SSL_sendfile), OpenSSL must own the
// socket for writes too: the stream then writes through a socket BIO, and a
// blocked write is retried with the same leading bytes, which the output
// queue guarantees (it consumes bytes only once written and rebuilds what it
// passes from its front; SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER).
#pragma once

#include <openssl/ssl.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace portico::tls {

// A worker's gathering buffer for TLS records, shared by its streams: every
// stream call that may write ends by sending or keeping what it gathered, so
// it is empty between calls.
class WriteGather {
public:
    WriteGather();
    ~WriteGather();
    WriteGather(const WriteGather&) = delete;
    WriteGather& operator=(const WriteGather&) = delete;

    // A reference to the gathering BIO, for SSL_set0_wbio.
    BIO* new_reference();
    std::string& bytes() { return bytes_; }

private:
    BIO* bio_;
    std::string bytes_;
};

class TlsStream {
public:
    // Unsent ciphertext beyond which read() waits for writability: twice
    // what one flush of a response can leave (ServerContext::tls_staging_size).
    static constexpr size_t max_unsent_while_reading = 128 * 1024;

    // Takes ownership of `ssl`, made by ServerTls::new_session for `fd`.
    TlsStream(SSL* ssl, int fd, WriteGather& gather);
    ~TlsStream() { SSL_free(ssl_); }
    TlsStream(const TlsStream&) = delete;
    TlsStream& operator=(const TlsStream&) = delete;

    enum class Step { done, blocked, failed };
    // Goes on with the handshake. `blocked`: wait for read_wants(). When it
    // ends, the records OpenSSL wrote last (TLS 1.3's session tickets) are
    // held for the first response's write, one segment instead of two; the
    // connection calls send_held() once its I/O turn is over.
    Step handshake();
    bool established() const { return established_; }

    // Like read(2): bytes read, 0 at the end of the stream (close_notify or
    // a plain close), or -1 with errno EAGAIN (wait for read_wants()) or
    // another error.
    ssize_t read(char* buffer, size_t size);
    // Encrypts at most one record: bytes taken, or -1 with errno EAGAIN
    // (kernel TLS only: wait for write_wants()) or another error. The
    // record goes out with send_gathered().
    ssize_t write(const char* bytes, size_t size);
    // Sends what the writes gathered, after what an earlier call could not
    // send. `blocked`: some is kept; wait for writability.
    Step send_gathered();
    // Records the socket did not take: the connection waits for writability.
    bool has_unsent() const { return !unsent_.empty() && !holding_; }
    // Sends the records handshake() held back, if it did.
    Step send_held() { return holding_ ? send_gathered() : Step::done; }

    // With kernel TLS: a file range the kernel encrypts (SSL_sendfile);
    // the same results as write().
    ssize_t send_file(int fd, off_t offset, size_t size);
    bool kernel_sends() const;

    // What the last blocked handshake or read, and the last blocked write,
    // wait for: core::io_readable or io_writable (0: it was not blocked).
    int read_wants() const { return read_wants_; }
    int write_wants() const { return write_wants_; }
    // Plaintext already decrypted, or records read ahead, that the socket
    // will not report.
    bool has_buffered_input() const { return SSL_has_pending(ssl_) == 1; }

    // The connection closes once its output is sent: the close_notify is
    // written with the last records (add_close_notify), one write fewer.
    void close_after_output() { close_after_output_ = true; }
    void add_close_notify();
    // Best effort: a close_notify (unless one went already), and what is
    // unsent, if the socket takes it now.
    void shutdown();
    // Between requests: OpenSSL's read and write buffers go back to the
    // allocator (when they hold nothing), so an idle connection stays small.
    void release_buffers() { SSL_free_buffers(ssl_); }

    // The handshake failed on a plain HTTP request (nginx's "plain HTTP
    // request was sent to HTTPS port").
    bool plain_http_received() const { return plain_http_; }
    bool resumed() const { return SSL_session_reused(ssl_) == 1; }
    // ALPN chose HTTP/2.
    bool negotiated_h2() const {
        const unsigned char* name = nullptr;
        unsigned int length = 0;
        SSL_get0_alpn_selected(ssl_, &name, &length);
        return length == 2 && name[0] == 'h' && name[1] == '2';
    }
    const char* protocol() const { return SSL_get_version(ssl_); }
    const char* cipher() const { return SSL_get_cipher_name(ssl_); }
    std::string_view server_name() const {
        const char* name = SSL_get_servername(ssl_, TLSEXT_NAMETYPE_host_name);
        return name ? std::string_view(name) : std::string_view();
    }
    // Why the last call failed, for a debug log line.
    const char* failure() const { return failure_; }

private:
    // Maps an SSL_ERROR_* after a failed call: sets `wants` or failure_.
    ssize_t blocked_or_failed(int result, int& wants);

    SSL* ssl_;
    int fd_;
    std::string& gathered_;
    std::string unsent_;  // ciphertext the socket did not take yet, or held
    bool holding_ = false;  // unsent_ is held back, not blocked
    bool close_after_output_ = false;
    int read_wants_ = 0;
    int write_wants_ = 0;
    bool established_ = false;
    bool plain_http_ = false;
    const char* failure_ = "";
};

}  // namespace portico::tls
