#include "tls_support.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace portico::test {

using Clock = std::chrono::steady_clock;

namespace {

// leaf: what a server certificate carries; ca: the signer. `openssl req
// -x509 -CA` (OpenSSL 3) signs a new key's certificate in one call.
const char* certificate_script = R"SH(set -e
cat > openssl.cnf <<'EOF'
[req]
distinguished_name = dn
[dn]
[ca]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[leaf]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth
[old]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = DNS:old.test
EOF
ec="-newkey ec -pkeyopt ec_paramgen_curve:P-256"
openssl req -config openssl.cnf -extensions ca -x509 $ec -nodes -keyout ca.key -out ca.pem \
  -subj "/CN=portico test CA" -days 400
leaf() {  # NAME SUBJECT SAN DAYS KEY-OPTIONS...
  name=$1 subject=$2 san=$3 days=$4; shift 4
  if [ -n "$san" ]; then set -- "$@" -addext "subjectAltName=$san"; fi
  openssl req -config openssl.cnf -extensions leaf -x509 "$@" -nodes -keyout "$name.key" \
    -out "$name.pem" -subj "$subject" -days "$days" -CA ca.pem -CAkey ca.key
}
leaf a /CN=a.test DNS:a.test,DNS:www.a.test 400 $ec
leaf wild /CN=wildcard DNS:*.x.test 400 $ec
leaf cn /CN=cn.test "" 400 $ec
leaf rsa /CN=rsa.test DNS:rsa.test 400 -newkey rsa:2048
leaf soon /CN=soon.test DNS:soon.test 10 $ec
# "openssl req -days" takes no negative number: a request, then
# "openssl x509 -days -1" ends the validity a day before it starts.
openssl req -config openssl.cnf -new $ec -nodes -keyout old.key -out old.csr -subj /CN=old.test
openssl x509 -req -in old.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days -1 \
  -extfile openssl.cnf -extensions old -out old.pem
chmod 644 *.key
)SH";

std::string read_all(int fd) {
    std::string out;
    char chunk[4096];
    ssize_t n;
    while ((n = ::read(fd, chunk, sizeof chunk)) > 0 || (n < 0 && errno == EINTR))
        if (n > 0) out.append(chunk, static_cast<size_t>(n));
    return out;
}

std::string openssl_errors() {
    std::string text;
    while (unsigned long code = ERR_get_error()) {
        char line[256];
        ERR_error_string_n(code, line, sizeof line);
        if (!text.empty()) text += "; ";
        text += line;
    }
    return text;
}

}  // namespace

CommandResult run_shell(const std::string& command) {
    CommandResult result;
    FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
    if (pipe == nullptr) return result;
    result.output = read_all(fileno(pipe));
    int status = ::pclose(pipe);
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return result;
}

Certificates::Certificates() {
    dir_.write("make.sh", certificate_script);
    CommandResult made = run_shell("cd " + dir_.path() + " && sh make.sh");
    if (made.exit_code != 0)
        throw std::runtime_error("making the test certificates failed:\n" + made.output);
}

std::string Certificates::entry(const std::string& name) const {
    return "{ cert = \"" + path(name + ".pem") + "\", key = \"" + path(name + ".key") + "\" }";
}

CommandResult check_config(const std::string& config_path) {
    CommandResult result;
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) return result;
    pid_t pid = ::fork();
    if (pid == 0) {
        // As the harness starts the server: root without the capabilities
        // that ignore file modes.
        ::prctl(PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, 0, 0, 0);
        ::prctl(PR_CAPBSET_DROP, CAP_DAC_READ_SEARCH, 0, 0, 0);
        ::dup2(out[1], STDOUT_FILENO);
        ::dup2(out[1], STDERR_FILENO);
        ::execl(PORTICO_BINARY, PORTICO_BINARY, "-t", "-c", config_path.c_str(),
                static_cast<char*>(nullptr));
        _exit(127);
    }
    ::close(out[1]);
    result.output = read_all(out[0]);
    ::close(out[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return result;
}

std::string tls_config(const std::vector<std::string>& certificates, const std::string& rest,
                       const std::string& tls_options, const std::string& server_options) {
    std::string list;
    for (const std::string& entry : certificates) list += (list.empty() ? "\n  " : ",\n  ") + entry;
    return "[server]\nlisten = [\"{listen}\"]\n" + server_options +
           "\n[tls]\nlisten = [\"127.0.0.1:0\"]\ncertificates = [" + list + "\n]\n" + tls_options +
           "\n" + rest + "\n";
}

uint16_t tls_port(const Portico& portico) {
    const std::string marker = ") for TLS";
    std::string log = portico.log();
    size_t end = log.find(marker);
    if (end == std::string::npos) throw std::runtime_error("no TLS listener logged:\n" + log);
    size_t start = log.rfind("(port ", end);
    return static_cast<uint16_t>(std::stoi(log.substr(start + 6, end - start - 6)));
}

std::vector<std::string> log_lines_above_info(const std::string& log) {
    std::vector<std::string> found;
    std::istringstream lines(log);
    std::string line;
    while (std::getline(lines, line))
        for (const char* level : {"[warning]", "[error]", "[critical]"})
            if (line.find(level) != std::string::npos) found.push_back(line);
    return found;
}

// ---- TlsClient -------------------------------------------------------------

TlsClient::TlsClient(uint16_t port, TlsOptions options) {
    fd_ = connect_loopback(port, options.receive_buffer);
    ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);

    context_ = SSL_CTX_new(TLS_client_method());
    if (options.security_level >= 0) SSL_CTX_set_security_level(context_, options.security_level);
    if (options.min_version) SSL_CTX_set_min_proto_version(context_, options.min_version);
    if (options.max_version) SSL_CTX_set_max_proto_version(context_, options.max_version);
    if (!options.ciphers.empty() && SSL_CTX_set_cipher_list(context_, options.ciphers.c_str()) != 1)
        throw std::runtime_error("client cipher list refused: " + options.ciphers);
    if (!options.ciphersuites.empty() &&
        SSL_CTX_set_ciphersuites(context_, options.ciphersuites.c_str()) != 1)
        throw std::runtime_error("client TLS 1.3 suites refused: " + options.ciphersuites);
    // A peer that closes without close_notify is an end of stream here.
    SSL_CTX_set_options(context_, SSL_OP_IGNORE_UNEXPECTED_EOF);
    SSL_CTX_set_mode(context_, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    if (!options.ca_file.empty())
        SSL_CTX_load_verify_locations(context_, options.ca_file.c_str(), nullptr);
    ssl_ = SSL_new(context_);
    SSL_set_fd(ssl_, fd_);
    // Verification is read afterwards (verify_result), never enforced, so
    // a test can look at what a rejected certificate was.
    SSL_set_verify(ssl_, SSL_VERIFY_NONE, nullptr);
    if (!options.server_name.empty()) {
        SSL_set_tlsext_host_name(ssl_, options.server_name.c_str());
        if (!options.ca_file.empty()) SSL_set1_host(ssl_, options.server_name.c_str());
    }
    if (!options.alpn.empty()) {
        std::string wire;
        for (const std::string& name : options.alpn) {
            wire += static_cast<char>(name.size());
            wire += name;
        }
        SSL_set_alpn_protos(ssl_, reinterpret_cast<const unsigned char*>(wire.data()),
                            static_cast<unsigned>(wire.size()));
    }
    if (options.session) {
        // A copy: OpenSSL marks a session it resumed with TLS 1.3 as used
        // up, and a test may offer the same one again.
        SSL_SESSION* copy = SSL_SESSION_dup(options.session);
        SSL_set_session(ssl_, copy);
        SSL_SESSION_free(copy);
    }
    SSL_set_connect_state(ssl_);
}

TlsClient::~TlsClient() {
    // A close_notify, as a browser leaving sends: without it OpenSSL marks
    // the session not resumable.
    if (fd_ >= 0 && SSL_is_init_finished(ssl_)) SSL_shutdown(ssl_);
    if (ssl_) SSL_free(ssl_);
    if (context_) SSL_CTX_free(context_);
    if (fd_ >= 0) ::close(fd_);
}

bool TlsClient::close_notify_received() const {
    return (SSL_get_shutdown(ssl_) & SSL_RECEIVED_SHUTDOWN) != 0;
}

void TlsClient::abort() {
    if (fd_ < 0) return;
    linger reset{1, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
    ::close(fd_);
    fd_ = -1;
    eof_ = true;
}

bool TlsClient::wait(short events, Clock::time_point deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd pfd{fd_, events, 0};
    return ::poll(&pfd, 1, static_cast<int>(left.count())) > 0;
}

int TlsClient::send_key_updates(int count, std::chrono::milliseconds stall) {
    int sent = 0;
    while (sent < count) {
        // Refused while the previous one is still unsent: that one goes first.
        bool scheduled = SSL_key_update(ssl_, SSL_KEY_UPDATE_REQUESTED) == 1;
        ERR_clear_error();
        int result = SSL_do_handshake(ssl_);
        if (result == 1) {
            if (scheduled) ++sent;
            continue;
        }
        int code = SSL_get_error(ssl_, result);
        ERR_clear_error();
        if (code != SSL_ERROR_WANT_WRITE && code != SSL_ERROR_WANT_READ) break;
        if (!wait(POLLOUT, Clock::now() + stall)) break;
    }
    return sent;
}

void TlsClient::take_error(int result) {
    int code = SSL_get_error(ssl_, result);
    std::string queued = openssl_errors();
    if (code == SSL_ERROR_SYSCALL)
        error_ = "syscall: " + std::string(errno ? std::strerror(errno) : "connection closed");
    else if (code == SSL_ERROR_ZERO_RETURN)
        error_ = "closed by the peer";
    else
        error_ = "SSL error " + std::to_string(code);
    if (!queued.empty()) error_ += ": " + queued;
}

bool TlsClient::handshake(std::chrono::milliseconds timeout) {
    auto deadline = Clock::now() + timeout;
    ERR_clear_error();
    while (true) {
        int result = SSL_connect(ssl_);
        if (result == 1) return true;
        int code = SSL_get_error(ssl_, result);
        if (code == SSL_ERROR_WANT_READ || code == SSL_ERROR_WANT_WRITE) {
            if (!wait(code == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline)) {
                error_ = "handshake timed out";
                return false;
            }
            continue;
        }
        take_error(result);
        return false;
    }
}

bool TlsClient::send(const std::string& bytes, std::chrono::milliseconds timeout) {
    auto deadline = Clock::now() + timeout;
    size_t offset = 0;
    ERR_clear_error();
    while (offset < bytes.size()) {
        size_t written = 0;
        int result = SSL_write_ex(ssl_, bytes.data() + offset, bytes.size() - offset, &written);
        if (result == 1) {
            offset += written;
            continue;
        }
        int code = SSL_get_error(ssl_, result);
        if (code != SSL_ERROR_WANT_WRITE && code != SSL_ERROR_WANT_READ) {
            take_error(result);
            return false;
        }
        // Blocked: take what the peer sends meanwhile (an echo), or both
        // sides would wait on full buffers.
        if (!wait(POLLIN | POLLOUT, deadline)) {
            error_ = "send timed out";
            return false;
        }
        char chunk[16384];
        size_t got = 0;
        while (!eof_ && SSL_read_ex(ssl_, chunk, sizeof chunk, &got) == 1)
            pending_.append(chunk, got);
        ERR_clear_error();
    }
    return true;
}

ssize_t TlsClient::read_some(char* buffer, size_t size, int timeout_ms) {
    if (!pending_.empty()) {
        size_t take = std::min(size, pending_.size());
        std::memcpy(buffer, pending_.data(), take);
        pending_.erase(0, take);
        return static_cast<ssize_t>(take);
    }
    if (eof_) return 0;
    auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    while (true) {
        size_t got = 0;
        int result = SSL_read_ex(ssl_, buffer, size, &got);
        if (result == 1) return static_cast<ssize_t>(got);
        int code = SSL_get_error(ssl_, result);
        if (code == SSL_ERROR_WANT_READ || code == SSL_ERROR_WANT_WRITE) {
            if (!wait(code == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline)) return -1;
            continue;
        }
        if (code != SSL_ERROR_ZERO_RETURN) take_error(result);
        ERR_clear_error();
        eof_ = true;
        return 0;
    }
}

std::string TlsClient::alpn() const {
    const unsigned char* name = nullptr;
    unsigned length = 0;
    SSL_get0_alpn_selected(ssl_, &name, &length);
    return name ? std::string(reinterpret_cast<const char*>(name), length) : std::string();
}

std::string TlsClient::version() const {
    return SSL_get_version(ssl_);
}

std::string TlsClient::cipher() const {
    const char* name = SSL_get_cipher_name(ssl_);
    return name ? name : "";
}

bool TlsClient::reused() const {
    return SSL_session_reused(ssl_) == 1;
}

std::string TlsClient::peer_subject() const {
    X509* peer = SSL_get0_peer_certificate(ssl_);
    if (!peer) return "";
    BIO* out = BIO_new(BIO_s_mem());
    X509_NAME_print_ex(out, X509_get_subject_name(peer), 0, XN_FLAG_RFC2253);
    char* data = nullptr;
    long length = BIO_get_mem_data(out, &data);
    std::string text(data, static_cast<size_t>(length));
    BIO_free(out);
    return text;
}

std::string TlsClient::peer_names() const {
    X509* peer = SSL_get0_peer_certificate(ssl_);
    if (!peer) return "";
    auto* names =
        static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(peer, NID_subject_alt_name, nullptr, nullptr));
    std::string text;
    for (int i = 0; names && i < sk_GENERAL_NAME_num(names); ++i) {
        const GENERAL_NAME* name = sk_GENERAL_NAME_value(names, i);
        if (name->type != GEN_DNS) continue;
        if (!text.empty()) text += ",";
        text += "DNS:";
        text.append(reinterpret_cast<const char*>(ASN1_STRING_get0_data(name->d.dNSName)),
                    static_cast<size_t>(ASN1_STRING_length(name->d.dNSName)));
    }
    GENERAL_NAMES_free(names);
    return text;
}

long TlsClient::verify_result() const {
    return SSL_get_verify_result(ssl_);
}

// A copy: the connection's own session is marked not resumable if the
// connection ends without a close_notify (abort()).
SSL_SESSION* TlsClient::take_session() const {
    SSL_SESSION* session = SSL_get0_session(ssl_);
    return session ? SSL_SESSION_dup(session) : nullptr;
}

int TlsClient::offered_ciphers() const {
    STACK_OF(SSL_CIPHER)* offered = SSL_get1_supported_ciphers(ssl_);
    int count = offered ? sk_SSL_CIPHER_num(offered) : 0;
    sk_SSL_CIPHER_free(offered);
    return count;
}

std::optional<Response> tls_fetch(uint16_t port, const std::string& request,
                                  const TlsOptions& options, std::chrono::milliseconds timeout) {
    TlsClient client(port, options);
    if (!client.handshake(timeout) || !client.send(request, timeout)) return std::nullopt;
    ResponseReader reader(client);
    return reader.read(timeout, request.rfind("HEAD ", 0) == 0);
}

namespace {

void put16(std::string& out, size_t value) {
    out += static_cast<char>((value >> 8) & 0xff);
    out += static_cast<char>(value & 0xff);
}

// A length-prefixed block: the length in `size` bytes, then the body.
std::string prefixed(const std::string& body, int size) {
    std::string out;
    if (size == 3) out += static_cast<char>((body.size() >> 16) & 0xff);
    if (size >= 2)
        put16(out, body.size());
    else
        out += static_cast<char>(body.size());
    return out + body;
}

std::string extension(uint16_t type, const std::string& body) {
    std::string out;
    put16(out, type);
    return out + prefixed(body, 2);
}

}  // namespace

std::string client_hello(uint16_t version, const std::vector<uint16_t>& suites,
                         const std::string& server_name) {
    std::string hello;
    put16(hello, version);
    for (int i = 0; i < 32; ++i) hello += static_cast<char>(i * 7 + 1);  // "random"
    hello += '\0';                                                       // no session id
    std::string list;
    for (uint16_t suite : suites) put16(list, suite);
    hello += prefixed(list, 2);
    hello += prefixed(std::string(1, '\0'), 1);  // null compression only
    std::string extensions;
    if (!server_name.empty()) {
        std::string entry(1, '\0');  // host_name
        entry += prefixed(server_name, 2);
        extensions += extension(0x0000, prefixed(entry, 2));
    }
    std::string groups;
    put16(groups, 0x001d);  // x25519
    put16(groups, 0x0017);  // secp256r1
    extensions += extension(0x000a, prefixed(groups, 2));
    extensions += extension(0x000b, prefixed(std::string(1, '\0'), 1));  // uncompressed points
    std::string algorithms;
    for (uint16_t algorithm : {0x0403, 0x0804, 0x0401, 0x0203, 0x0201})
        put16(algorithms, algorithm);
    extensions += extension(0x000d, prefixed(algorithms, 2));
    hello += prefixed(extensions, 2);
    std::string handshake = "\x01" + prefixed(hello, 3);
    std::string record = "\x16\x03\x01";
    return record + prefixed(handshake, 2);
}

int alert_description(const std::string& bytes) {
    if (bytes.size() < 7 || bytes[0] != '\x15') return -1;
    return static_cast<unsigned char>(bytes[6]);
}

std::string sha256_hex(const std::string& bytes) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned length = 0;
    EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr);
    static const char* hex = "0123456789abcdef";
    std::string text;
    for (unsigned i = 0; i < length; ++i) {
        text += hex[digest[i] >> 4];
        text += hex[digest[i] & 15];
    }
    return text;
}

TlsOptions sni_a() {
    TlsOptions options;
    options.server_name = "a.test";
    return options;
}

}  // namespace portico::test
