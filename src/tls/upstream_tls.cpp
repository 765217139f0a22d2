#include "tls/upstream_tls.hpp"

#include <arpa/inet.h>
#include <openssl/x509v3.h>

#include "tls/certificate_files.hpp"
#include "tls/openssl_error.hpp"
#include "tls/record_writer.hpp"

namespace portico::tls {

namespace {

// ALPN: the proxy speaks HTTP/1.1 upstream; a server that would pick h2
// for a client offering it must not here.
constexpr unsigned char upstream_alpn[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};

// The worker's buffers for upstream records, made at its first TLS upstream
// connection (the master, which only loads contexts, never needs them). A
// worker is one thread: its connections take turns, and each call leaves
// the gathering buffer empty (see WriteGather).
struct WorkerBuffers {
    WriteGather gather;
    std::unique_ptr<char[]> staging = std::make_unique<char[]>(record_staging_size);
};

WorkerBuffers& worker_buffers() {
    static WorkerBuffers buffers;
    return buffers;
}

// Where an SSL finds its server's CachedSession (on_new_session).
int cache_index() {
    static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
    return index;
}

// OpenSSL made a session to resume with (TLS 1.3: a ticket arrived after the
// handshake): the server keeps it for its next connection. 1: we took the
// reference.
int on_new_session(SSL* ssl, SSL_SESSION* session) {
    auto* cache = static_cast<CachedSession*>(SSL_get_ex_data(ssl, cache_index()));
    if (!cache) return 0;
    cache->replace(session);
    return 1;
}

bool is_ip_literal(const std::string& name) {
    unsigned char address[16];
    return inet_pton(AF_INET, name.c_str(), address) == 1 ||
           inet_pton(AF_INET6, name.c_str(), address) == 1;
}

// The context of one upstream; errors go to `errors` at the tls = { }.
SSL_CTX* make_context(const config::UpstreamTlsConfig& config, const std::string& path,
                      std::vector<config::ConfigError>& errors) {
    auto error = [&](std::string message) {
        errors.push_back({path, config.where, std::move(message)});
        return nullptr;
    };
    clear_openssl_errors();
    SSL_CTX* context = SSL_CTX_new(TLS_client_method());
    if (!context) return error("cannot create a TLS context: " + take_openssl_errors());
    SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
    SSL_CTX_set_options(context, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION |
                                     // An upstream that closes without close_notify
                                     // ends its stream, as nginx takes it.
                                     SSL_OP_IGNORE_UNEXPECTED_EOF);
    // As the server side (tls/server_tls.cpp): one record per SSL_write, and
    // a blocked write retried with the queue's front as it is then. Unlike
    // the server side, AUTO_RETRY stays on: a read goes on through session
    // tickets to the data behind them, so a read that blocks has left nothing
    // read ahead (the upstream is ours to trust with that, a client is not).
    SSL_CTX_set_mode(context, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_read_ahead(context, 1);
    SSL_CTX_set_alpn_protos(context, upstream_alpn, sizeof upstream_alpn);
    SSL_CTX_set_session_cache_mode(context,
                                   SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    SSL_CTX_sess_set_new_cb(context, on_new_session);
    auto fail = [&](std::string message) {
        SSL_CTX_free(context);
        return error(std::move(message));
    };
    if (config.verify) {
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nullptr);
        if (!config.ca.empty()) {
            if (std::string why = readable_file_problem(config.ca); !why.empty())
                return fail("cannot read ca " + config.ca + ": " + why);
            if (SSL_CTX_load_verify_locations(context, config.ca.c_str(), nullptr) != 1)
                return fail("cannot load ca " + config.ca + ": " + take_openssl_errors() +
                            " (expected PEM certificates)");
        } else if (SSL_CTX_set_default_verify_paths(context) != 1) {
            return fail("cannot load the system's trusted certificates: " + take_openssl_errors());
        }
    }
    if (config.client)
        if (std::string why = use_certificate_files(context, *config.client); !why.empty())
            return fail(why);
    return context;
}

}  // namespace

std::string UpstreamTls::name_for(std::string_view entry_host) const {
    return config_.server_name.empty() ? std::string(entry_host) : config_.server_name;
}

UpstreamTlsSet::Loaded UpstreamTlsSet::load(const config::Config& config) {
    Loaded loaded;
    auto set = std::unique_ptr<UpstreamTlsSet>(new UpstreamTlsSet());
    for (const config::UpstreamConfig& upstream : config.upstreams) {
        std::unique_ptr<UpstreamTls>& slot = set->upstreams_.emplace_back();
        if (!upstream.tls) continue;
        if (SSL_CTX* context = make_context(*upstream.tls, config.path, loaded.errors))
            slot = std::make_unique<UpstreamTls>(context, *upstream.tls);
    }
    if (loaded.errors.empty()) loaded.set = std::move(set);
    return loaded;
}

UpstreamSession::UpstreamSession(SSL* ssl, int fd)
    : ssl_(ssl), stream_(ssl, fd, worker_buffers().gather) {}

std::unique_ptr<UpstreamSession> UpstreamSession::open(const UpstreamTls& tls, int fd,
                                                       const std::string& name,
                                                       CachedSession& cache) {
    SSL* ssl = SSL_new(tls.context_);
    if (!ssl) return nullptr;
    bool ready = SSL_set_fd(ssl, fd) == 1 && SSL_set_ex_data(ssl, cache_index(), &cache) == 1;
    bool ip = is_ip_literal(name);
    if (ready && tls.config_.verify) {
        // An IP address is checked against the certificate's IP entries,
        // a name against its DNS names (no partial wildcards, as browsers).
        X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
        X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        ready = ip ? X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str()) == 1
                   : SSL_set1_host(ssl, name.c_str()) == 1;
    }
    // SNI carries host names only (RFC 6066 3).
    if (ready && !ip) ready = SSL_set_tlsext_host_name(ssl, name.c_str()) == 1;
    if (ready && cache.get()) ready = SSL_set_session(ssl, cache.get()) == 1;
    if (!ready) {
        SSL_free(ssl);
        clear_openssl_errors();
        return nullptr;
    }
    SSL_set_connect_state(ssl);
    return std::make_unique<UpstreamSession>(ssl, fd);
}

std::string UpstreamSession::failure() const {
    long verified = SSL_get_verify_result(ssl_);
    if (verified != X509_V_OK)
        return std::string("certificate verify failed: ") + X509_verify_cert_error_string(verified);
    return stream_.failure();
}

transport::OutputQueue::FlushResult UpstreamSession::write(transport::OutputQueue& output,
                                                           uint64_t& sent) {
    return write_records(stream_, output, sent, worker_buffers().staging.get());
}

}  // namespace portico::tls
