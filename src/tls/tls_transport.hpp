// TLS as a transport (transport/transport.hpp): the handshake, records in
// and out through the connection's TlsStream, and the socket events TLS
// needs beyond what its connection asks for. The HTTP codecs above see the
// same surface as a plain socket.
#pragma once

#include <cstdint>
#include <memory>

#include "metrics/worker_counters.hpp"
#include "tls/record_writer.hpp"
#include "tls/server_tls.hpp"
#include "tls/tls_stream.hpp"
#include "transport/transport.hpp"

namespace portico::tls {

// A worker's TLS side: the certificates, and the buffers all its
// connections' records pass through (each call empties them again).
class WorkerTls {
public:
    WorkerTls(const ServerTls& loaded, metrics::WorkerCounters& counters)
        : tls_(loaded), counters_(counters), staging_(std::make_unique<char[]>(staging_size)) {}

    // The transport of a socket accepted on a TLS listener; nullptr when
    // OpenSSL has no memory for a session (the socket is closed then).
    // `listener`: config::listeners_of's index (its sites' certificates).
    std::unique_ptr<transport::Transport> accept(int fd, uint16_t listener);

    // Where plaintext is staged (see tls/record_writer.hpp).
    static constexpr size_t staging_size = record_staging_size;

private:
    friend class TlsTransport;
    const ServerTls& tls_;
    metrics::WorkerCounters& counters_;
    std::unique_ptr<char[]> staging_;
    WriteGather gather_;
};

class TlsTransport final : public transport::Transport {
public:
    TlsTransport(WorkerTls& worker, SSL* ssl, int fd);

    Step handshake() override;
    bool established() const override { return stream_.established() || refused_; }
    Step send_held() override;
    bool negotiated_h2() const override { return stream_.negotiated_h2(); }

    ssize_t read(char* buffer, size_t size) override;
    bool has_buffered_input() const override { return !refused_ && stream_.has_buffered_input(); }
    transport::OutputQueue::FlushResult write(transport::OutputQueue& output,
                                              uint64_t& sent) override;

    int poll_events(int wanted, bool output_blocked, core::IoWatcher& watcher) override;
    Ready on_socket_event(int events, bool output_blocked) override;

    void close_after_output() override { stream_.close_after_output(); }
    void shutdown_write() override;
    void close(bool peer_closed) override;
    void release_buffers() override;
    // Records are gathered already (and sendfile is not ours to cork).
    bool set_cork(bool) override { return false; }
    bool secure() const override { return true; }
    const char* tls_protocol() const override { return stream_.protocol(); }
    const char* tls_cipher() const override { return stream_.cipher(); }
    std::string_view server_name() const override { return stream_.server_name(); }
    const char* failure() const override { return stream_.failure(); }

private:
    // nginx's answer to a plain HTTP request on an HTTPS port: a 400 in
    // clear text; the connection then lingers, reading the socket as it is.
    Step answer_plain_http();

    WorkerTls& worker_;
    TlsStream stream_;
    uint64_t accepted_ns_;  // the handshake's start
    bool refused_ = false;  // answered in clear text: no TLS any more
};

}  // namespace portico::tls
