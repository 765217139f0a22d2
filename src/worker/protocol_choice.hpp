// Which protocol a new client connection speaks, decided before either
// codec sees it: a TLS transport's handshake first (its ALPN chooses h2 or
// HTTP/1.1), or on a cleartext listener with h2c on, the first bytes (the
// HTTP/2 preface, RFC 9113 3.4, or an HTTP/1.x request). The transport and
// the bytes read go to the codec chosen (http1::ClientConnection,
// http2::Connection), which never sees a handshake. A cleartext listener
// without h2c goes to HTTP/1.x at once, with nothing in between.
#pragma once

#include <memory>

#include "http/client_socket.hpp"
#include "http/server_context.hpp"
#include "transport/transport.hpp"

namespace portico::worker {

class ProtocolChoice final : public http::ClientSocket {
public:
    // An accepted socket's transport, non-blocking.
    static void start(http::ServerContext& server, std::unique_ptr<transport::Transport> transport,
                      const http::PeerAddress& peer);

    // http::OpenConnection: nothing is served yet, so a drain closes it.
    void announce_drain() override {}
    void close_if_idle() override { close(); }

private:
    ProtocolChoice(http::ServerContext& server, std::unique_ptr<transport::Transport> transport,
                   const http::PeerAddress& peer);
    ~ProtocolChoice() override;

    static void on_io(void* choice, int events);
    static void on_timer(void* choice) { static_cast<ProtocolChoice*>(choice)->close(); }
    // Goes on as far as the bytes in hand allow: the handshake, the first
    // bytes, the choice.
    void step();
    bool finish_handshake();
    // Reads the first bytes of a cleartext connection; true once they decide.
    bool read_first_bytes();
    void linger();
    void choose();
    void update_poll();
    void close();

    char* input_ = nullptr;  // the first bytes, from the worker's pool
    size_t filled_ = 0;
    // A plain HTTP request on a TLS port was answered in clear text: the
    // rest is read and dropped until the client closes (nginx's lingering
    // close), so the answer is not lost to a reset.
    bool lingering_ = false;
    bool peer_closed_ = false;
    bool closed_ = false;
};

}  // namespace portico::worker
