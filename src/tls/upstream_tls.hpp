// The client side of TLS, for upstreams with `tls = { ... }`: one OpenSSL
// context per such upstream (verification, trusted roots, client
// certificate, ALPN http/1.1), and each connection's session over it.
//
// Loaded by the master (at start, on `portico -t` and on every reload), as
// ServerTls is: an unreadable file or a key that does not match its
// certificate is a config error with its line, and workers inherit the
// contexts through fork() without reading a key file themselves.
//
// Resumption: each upstream server keeps the last session it gave
// (CachedSession, in the worker), and the next connection to it offers it,
// so a pool that opens connections again pays one full handshake per server
// and worker, not one per connection (nginx's proxy_ssl_session_reuse).
#pragma once

#include <openssl/ssl.h>
#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "tls/tls_stream.hpp"
#include "transport/output_queue.hpp"

namespace portico::tls {

// The session an upstream server last gave a connection of this worker.
class CachedSession {
public:
    CachedSession() = default;
    ~CachedSession() { SSL_SESSION_free(session_); }
    CachedSession(const CachedSession&) = delete;
    CachedSession& operator=(const CachedSession&) = delete;

    SSL_SESSION* get() const { return session_; }
    // Takes ownership of `session` (nullptr: forget the one kept).
    void replace(SSL_SESSION* session) {
        SSL_SESSION_free(session_);
        session_ = session;
    }

private:
    SSL_SESSION* session_ = nullptr;
};

// One upstream's context.
class UpstreamTls {
public:
    explicit UpstreamTls(SSL_CTX* context, const config::UpstreamTlsConfig& config)
        : context_(context), config_(config) {}
    ~UpstreamTls() { SSL_CTX_free(context_); }
    UpstreamTls(const UpstreamTls&) = delete;
    UpstreamTls& operator=(const UpstreamTls&) = delete;

    // The name a server's certificate is checked against, and sent as SNI
    // (unless an IP address): `server_name` when set, else the server's
    // own host (`entry_host`: "api.internal" of "api.internal:8443").
    std::string name_for(std::string_view entry_host) const;

private:
    friend class UpstreamSession;
    SSL_CTX* context_;
    const config::UpstreamTlsConfig& config_;
};

// Every upstream's context, by its index in Config::upstreams (nullptr for
// a cleartext one).
class UpstreamTlsSet {
public:
    struct Loaded {
        std::unique_ptr<UpstreamTlsSet> set;      // set when errors is empty
        std::vector<config::ConfigError> errors;  // FILE:LINE:COL of the tls = { }
    };
    static Loaded load(const config::Config& config);

    const UpstreamTls* of(size_t upstream) const {
        return upstream < upstreams_.size() ? upstreams_[upstream].get() : nullptr;
    }

private:
    std::vector<std::unique_ptr<UpstreamTls>> upstreams_;
};

// One upstream connection's TLS: the handshake, then the request and
// response as records, through the same TlsStream (and record writer) a
// client connection uses.
class UpstreamSession {
public:
    // nullptr when OpenSSL has no memory for a session. `name`: from
    // UpstreamTls::name_for. `cache`: the server's, which outlives every
    // connection to it.
    static std::unique_ptr<UpstreamSession> open(const UpstreamTls& tls, int fd,
                                                 const std::string& name, CachedSession& cache);

    // Goes on with the handshake; `blocked`: wait for handshake_wants().
    TlsStream::Step handshake() { return stream_.handshake(); }
    bool established() const { return stream_.established(); }
    int handshake_wants() const { return stream_.read_wants(); }
    // Why the handshake or the last call failed, for the error log: the
    // verification's own reason ("certificate has expired", "hostname
    // mismatch") when it was the certificate.
    std::string failure() const;

    ssize_t read(char* buffer, size_t size) { return stream_.read(buffer, size); }
    // Records OpenSSL read ahead, or plaintext it holds: epoll will not
    // report them.
    bool has_buffered_input() const { return stream_.has_buffered_input(); }
    transport::OutputQueue::FlushResult write(transport::OutputQueue& output, uint64_t& sent);
    // Pooled and idle: OpenSSL's buffers go back.
    void release_buffers() { stream_.release_buffers(); }
    // A close_notify, when the socket takes it now.
    void shutdown() { stream_.shutdown(); }

    UpstreamSession(SSL* ssl, int fd);

private:
    SSL* ssl_;  // owned by stream_
    TlsStream stream_;
};

}  // namespace portico::tls
