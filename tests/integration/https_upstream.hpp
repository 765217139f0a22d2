// A real HTTPS origin for the upstream TLS tests: Node's `https` server,
// started by the test on 127.0.0.1 (an ephemeral port) with a certificate
// the test made (tls_support.hpp's Certificates). It answers
//   .../big/N     N bytes of "0123456789" repeated (many TLS records);
//   .../echo      the request body;
//   an Upgrade    101, then every byte echoed (a WebSocket's tunnel);
//   anything else "hello TARGET";
// each with what its TLS connection saw: X-Alpn (the protocol ALPN chose),
// X-Sni (the server name sent), X-Resumed ("true" for a resumed session),
// X-Client (the client certificate's CN, or "none") and X-Connection (the
// connection's number, from 1). Stopped (by its pid) with the object.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace portico::test {

struct HttpsUpstreamOptions {
    std::string cert;  // PEM files
    std::string key;
    // Set: a client certificate signed by this CA is required (mTLS).
    std::string client_ca;
};

class HttpsUpstream {
public:
    explicit HttpsUpstream(const HttpsUpstreamOptions& options);
    ~HttpsUpstream();
    HttpsUpstream(const HttpsUpstream&) = delete;
    HttpsUpstream& operator=(const HttpsUpstream&) = delete;

    uint16_t port() const { return port_; }
    std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

private:
    pid_t pid_ = -1;
    uint16_t port_ = 0;
};

// A leaf certificate signed by `certs`' CA (tls_support.hpp), made with the
// openssl command line into DIR/NAME.pem and DIR/NAME.key: `san` its
// subjectAltName ("IP:127.0.0.1"), `usage` its extendedKeyUsage
// ("serverAuth", "clientAuth").
void make_leaf(const std::string& dir, const std::string& name, const std::string& subject,
               const std::string& san, const std::string& usage);

}  // namespace portico::test
