// What the TLS tests share: certificates made at test time with `openssl
// req` (no key material in the repository), a config with a [tls] listener,
// the TLS port a started portico logged, and a small blocking TLS client on
// OpenSSL whose every read has a deadline (a broken server fails the test
// rather than hanging it).
#pragma once

#include <openssl/ssl.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "harness.hpp"
#include "proxy_support.hpp"

namespace portico::test {

// In a temp folder of their own, made by the openssl command line:
//   ca.pem                      the CA that signs every leaf below
//   a.pem / a.key               SAN a.test and www.a.test (ECDSA P-256), the usual default
//   wild.pem / wild.key         SAN *.x.test
//   cn.pem / cn.key             CN cn.test and no SAN at all
//   rsa.pem / rsa.key           RSA 2048, SAN rsa.test
//   old.pem / old.key           CN and SAN old.test, expired yesterday
//   soon.pem / soon.key         SAN soon.test, expires in 10 days
// Every other leaf is valid for 400 days.
class Certificates {
public:
    Certificates();
    const std::string& dir() const { return dir_.path(); }
    std::string path(const std::string& name) const { return dir_.path() + "/" + name; }
    std::string ca() const { return path("ca.pem"); }
    // `{ cert = "DIR/NAME.pem", key = "DIR/NAME.key" }`
    std::string entry(const std::string& name) const;
    // Writes DIR/name (a broken or replaced file); returns its path.
    std::string write(const std::string& name, const std::string& content) const {
        return dir_.write(name, content);
    }

private:
    TempDir dir_;
};

// The result of a shell command: its exit code and stdout + stderr.
struct CommandResult {
    int exit_code = -1;
    std::string output;
};
CommandResult run_shell(const std::string& command);

// `portico -t -c CONFIG`, run like the server (without the capabilities
// that let root read a chmod 000 file).
CommandResult check_config(const std::string& config_path);

// A [server] on "{listen}" and a [tls] on 127.0.0.1:0 with the given
// certificate entries (Certificates::entry) and extra [tls] lines, then
// `rest` (locations, upstreams).
std::string tls_config(const std::vector<std::string>& certificates, const std::string& rest,
                       const std::string& tls_options = "",
                       const std::string& server_options = "workers = 1\n");

// The port of the first TLS listener, from "(port N) for TLS" in the log.
uint16_t tls_port(const Portico& portico);

// Lines of the error log at warning level or above ("[warning]", "[error]",
// "[critical]"), for the checks that bad input logs nothing above info.
std::vector<std::string> log_lines_above_info(const std::string& log);

struct TlsOptions {
    std::string server_name;        // SNI; empty: none sent
    std::vector<std::string> alpn;  // offered, in order; empty: no ALPN extension
    int min_version = 0;            // TLS1_2_VERSION...; 0: OpenSSL's default
    int max_version = 0;
    std::string ciphers;             // TLS 1.2 and below, OpenSSL syntax; empty: default
    std::string ciphersuites;        // TLS 1.3; empty: default
    int security_level = -1;         // 0 to offer what OpenSSL refuses by default
    SSL_SESSION* session = nullptr;  // a session to resume (not owned)
    std::string ca_file;             // set: the chain must verify against it
    int receive_buffer = 0;          // > 0 shrinks SO_RCVBUF (a slow reader)
};

// One TLS connection to 127.0.0.1:port. The socket is non-blocking; every
// call waits with poll() up to its deadline. Usable as a ResponseReader's
// source.
class TlsClient : public ByteSource {
public:
    explicit TlsClient(uint16_t port, TlsOptions options = {});
    ~TlsClient() override;
    TlsClient(const TlsClient&) = delete;
    TlsClient& operator=(const TlsClient&) = delete;

    // Runs the handshake; false with error() set when it failed or timed out.
    bool handshake(std::chrono::milliseconds timeout = 5s);
    const std::string& error() const { return error_; }

    // Writes everything (in one SSL_write call when it fits a record), reading
    // what arrives meanwhile into the buffer so neither side stalls. False
    // when the connection failed.
    bool send(const std::string& bytes, std::chrono::milliseconds timeout = 10s);
    ssize_t read_some(char* buffer, size_t size, int timeout_ms) override;

    // What the handshake settled.
    std::string alpn() const;     // "" when none was selected
    std::string version() const;  // "TLSv1.3"
    std::string cipher() const;
    bool reused() const;
    std::string peer_subject() const;  // "CN=a.test"
    std::string peer_names() const;    // "DNS:a.test,DNS:www.a.test" ("" without SAN)
    long verify_result() const;        // X509_V_OK when ca_file verified the chain
    // The session to resume later (owned by the caller: SSL_SESSION_free).
    // With TLS 1.3 the ticket comes after the handshake: read a response first.
    SSL_SESSION* take_session() const;
    // The number of cipher suites the ClientHello offers (checks a refused
    // offer really was made).
    int offered_ciphers() const;

    // Sends up to `count` TLS 1.3 KeyUpdate(update_requested) messages and
    // reads nothing (each asks the server for a KeyUpdate of its own). Stops
    // early when the socket takes nothing more for `stall`; returns how
    // many went out.
    int send_key_updates(int count, std::chrono::milliseconds stall = 2s);

    // The server ended the stream with a close_notify (not a bare close).
    bool close_notify_received() const;

    int fd() const { return fd_; }
    // Closes the TCP connection without a close_notify (a client that leaves).
    void abort();

private:
    bool wait(short events, std::chrono::steady_clock::time_point deadline);
    void take_error(int result);

    int fd_ = -1;
    SSL_CTX* context_ = nullptr;
    SSL* ssl_ = nullptr;
    std::string error_;
    std::string pending_;  // read while a send waited
    bool eof_ = false;
};

// One request on a new TLS connection (any framing); nullopt when the
// handshake failed or the response was incomplete.
std::optional<Response> tls_fetch(uint16_t port, const std::string& request,
                                  const TlsOptions& options = {},
                                  std::chrono::milliseconds timeout = 5s);

// A hand-made ClientHello record, as a scanner or an old client sends it:
// `version` in the hello (0x0303 TLS 1.2, 0x0302 1.1, 0x0301 1.0), the
// given cipher suite numbers, supported_groups (x25519, P-256),
// ec_point_formats, signature_algorithms and, when set, the server name.
// No key share: it is a TLS 1.2 (or older) hello.
std::string client_hello(uint16_t version, const std::vector<uint16_t>& suites,
                         const std::string& server_name = "");
// The description byte of the TLS alert `bytes` start with, or -1 when they
// are not an alert record.
int alert_description(const std::string& bytes);
inline constexpr int alert_handshake_failure = 40;
inline constexpr int alert_protocol_version = 70;

// SHA-256 of `bytes`, lower-case hex.
std::string sha256_hex(const std::string& bytes);

// A client that names a.test in its SNI, nothing else set.
TlsOptions sni_a();

}  // namespace portico::test
