// A connection to a `proxy_protocol = true` listener starts here: its PROXY
// header (http/proxy_protocol.hpp) is read from the socket before anything
// else (before the TLS handshake, before the first request), then the
// connection goes on to the protocol choice with the header's source as its
// peer. No header, a bad one, or none within header_timeout: the
// connection is closed, counted in portico_proxy_protocol_errors_total,
// and logged at most once a second; nothing of it reaches a handler.
#pragma once

#include <memory>
#include <string_view>

#include "http/client_socket.hpp"
#include "http/server_context.hpp"
#include "metrics/layout.hpp"
#include "transport/transport.hpp"

namespace portico::worker {

class ProxyHeaderRead final : public http::ClientSocket {
public:
    // An accepted socket's transport (plain or TLS, before its handshake).
    static void start(http::ServerContext& server, std::unique_ptr<transport::Transport> transport,
                      const http::PeerAddress& peer);

    // http::OpenConnection: nothing is served yet, so a drain closes it.
    void announce_drain() override {}
    void close_if_idle() override { close(); }

private:
    ProxyHeaderRead(http::ServerContext& server, std::unique_ptr<transport::Transport> transport,
                    const http::PeerAddress& peer);
    ~ProxyHeaderRead() override;

    static void on_io(void* self, int events);
    static void on_timer(void* self);
    // Takes what the socket holds of the header, and no byte past it: the
    // bytes after it are the TLS handshake's or the first request's.
    void read();
    void fail(metrics::ProxyProtocolError reason, std::string_view problem);
    void close();

    char* header_ = nullptr;  // from the worker's buffer pool
    size_t filled_ = 0;
    bool closed_ = false;
};

}  // namespace portico::worker
