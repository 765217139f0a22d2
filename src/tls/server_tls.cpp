#include "tls/server_tls.hpp"

#include <openssl/err.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <span>

#include "tls/certificate_files.hpp"
#include "tls/alpn_challenge.hpp"
#include "tls/openssl_error.hpp"
#include "tls/ticket_keys.hpp"

namespace portico::tls {

namespace {

constexpr int expiry_warning_days = 30;
// What ALPN offers, in wire format (length-prefixed names), in our order of
// preference: h2 first when [http2] is enabled.
struct AlpnOffer {
    const unsigned char* names;
    unsigned int length;
};
constexpr unsigned char http1_names[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
constexpr unsigned char h2_and_http1_names[] = {2, 'h', '2', 8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
constexpr AlpnOffer http1_only{http1_names, sizeof http1_names};
constexpr AlpnOffer h2_and_http1{h2_and_http1_names, sizeof h2_and_http1_names};
// A fixed session ID context: resumption is allowed across every context
// (certificate) of the server, as the ticket keys are.
constexpr unsigned char session_id_context[] = {'p', 'o', 'r', 't', 'i', 'c', 'o'};

std::string lower(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

int on_alpn(SSL*, const unsigned char** out, unsigned char* out_length, const unsigned char* in,
            unsigned int in_length, void* offer_arg) {
    const auto* offer = static_cast<const AlpnOffer*>(offer_arg);
    unsigned char* selected = nullptr;
    if (SSL_select_next_proto(&selected, out_length, offer->names, offer->length, in,
                              in_length) != OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_NOACK;  // no common protocol: go on without ALPN, as nginx does
    *out = selected;
    return SSL_TLSEXT_ERR_OK;
}

std::vector<std::string> names_of(X509* certificate) {
    std::vector<std::string> names;
    auto* alternatives = static_cast<GENERAL_NAMES*>(
        X509_get_ext_d2i(certificate, NID_subject_alt_name, nullptr, nullptr));
    for (int i = 0; alternatives && i < sk_GENERAL_NAME_num(alternatives); ++i) {
        const GENERAL_NAME* name = sk_GENERAL_NAME_value(alternatives, i);
        if (name->type != GEN_DNS) continue;
        const ASN1_STRING* text = name->d.dNSName;
        names.push_back(lower({reinterpret_cast<const char*>(ASN1_STRING_get0_data(text)),
                               static_cast<size_t>(ASN1_STRING_length(text))}));
    }
    GENERAL_NAMES_free(alternatives);
    if (!names.empty()) return names;
    // RFC 6125: the CN counts only when there is no DNS name in the SAN.
    X509_NAME* subject = X509_get_subject_name(certificate);
    int index = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
    if (index >= 0) {
        const ASN1_STRING* text = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, index));
        names.push_back(lower({reinterpret_cast<const char*>(ASN1_STRING_get0_data(text)),
                               static_cast<size_t>(ASN1_STRING_length(text))}));
    }
    return names;
}

// "*.example.com" covers exactly one label: a.example.com, not example.com
// nor a.b.example.com (RFC 6125 6.4.3).
bool wildcard_covers(std::string_view pattern, std::string_view host) {
    if (!pattern.starts_with("*.")) return false;
    size_t dot = host.find('.');
    return dot != std::string_view::npos && dot > 0 && host.substr(dot) == pattern.substr(1);
}

std::string expiry_warning(X509* certificate, const std::string& file) {
    int days = 0, seconds = 0;
    const ASN1_TIME* not_after = X509_get0_notAfter(certificate);
    if (ASN1_TIME_diff(&days, &seconds, nullptr, not_after) != 1) return {};
    if (days >= expiry_warning_days) return {};
    BIO* text = BIO_new(BIO_s_mem());
    ASN1_TIME_print(text, not_after);
    char* date = nullptr;
    long length = BIO_get_mem_data(text, &date);
    std::string when(date, static_cast<size_t>(std::max(0L, length)));
    BIO_free(text);
    if (days < 0 || (days == 0 && seconds <= 0))
        return "certificate " + file + " expired on " + when + ": clients will refuse it; renew it";
    return "certificate " + file + " expires in " + std::to_string(days) + " days (" + when +
           "): renew it";
}

// The policy every context shares.
bool apply_policy(SSL_CTX* context, const config::TlsConfig& tls, bool offer_h2,
                  TicketKeys* keys) {
    SSL_CTX_set_min_proto_version(context, tls.tls12 ? TLS1_2_VERSION : TLS1_3_VERSION);
    SSL_CTX_set_max_proto_version(context, tls.tls13 ? TLS1_3_VERSION : TLS1_2_VERSION);
    uint64_t options = SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION |
                       // A client that closes without close_notify is a normal end.
                       SSL_OP_IGNORE_UNEXPECTED_EOF |
                       // Our order of suites, not the client's (testssl.sh rates a
                       // server without one HIGH), except that a client putting
                       // ChaCha20 first (no AES hardware) gets it.
                       SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_PRIORITIZE_CHACHA;
    if (!keys) options |= SSL_OP_NO_TICKET;
    if (kernel_tls_available()) options |= SSL_OP_ENABLE_KTLS;
    SSL_CTX_set_options(context, options);
    // Partial writes: each SSL_write sends one record, and a blocked write is
    // retried with the queue's front as it is then (see tls/tls_stream.hpp).
    // (Not SSL_MODE_RELEASE_BUFFERS: it frees and takes the write buffer
    // again for every record; an idle connection gives both buffers back
    // instead, see TlsStream::release_buffers.)
    SSL_CTX_set_mode(context, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    // With AUTO_RETRY (OpenSSL's default) one SSL_read goes on reading the
    // socket through every non-data record, a KeyUpdate flood included,
    // gathering an answer to each. Without it a call stops when its
    // read-ahead buffer is used up (WANT_READ; epoll reports the rest), so
    // TlsStream::read's bound on unsent answers holds.
    SSL_CTX_clear_mode(context, SSL_MODE_AUTO_RETRY);
    // TLS 1.3 suites, ours first since the server's order wins: AES-128-GCM
    // is as safe for this use and about a third cheaper per byte than
    // AES-256 (OpenSSL's own first choice).
    SSL_CTX_set_ciphersuites(context,
                             "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256");
    // One read(2) takes every record that arrived, not a header then a body.
    SSL_CTX_set_read_ahead(context, 1);
    // Resumption is by tickets only: a per-worker session cache would not
    // be found by the next connection, which may reach another worker.
    SSL_CTX_set_session_cache_mode(context, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_session_id_context(context, session_id_context, sizeof session_id_context);
    // TLS 1.3: one ticket per handshake (OpenSSL sends two); a browser
    // resumes with one, and each costs an encryption and a packet's bytes.
    SSL_CTX_set_num_tickets(context, keys ? 1 : 0);
    if (keys) keys->install(context);
    SSL_CTX_set_dh_auto(context, 1);
    SSL_CTX_set_alpn_select_cb(context, on_alpn,
                               const_cast<AlpnOffer*>(offer_h2 ? &h2_and_http1 : &http1_only));
    return tls.tls12 ? SSL_CTX_set_cipher_list(context, tls.ciphers.c_str()) == 1 : true;
}

}  // namespace

bool kernel_tls_available() {
    static const bool available = [] {
        std::ifstream ulps("/proc/sys/net/ipv4/tcp_available_ulp");
        std::string text((std::istreambuf_iterator<char>(ulps)), std::istreambuf_iterator<char>());
        return text.find("tls") != std::string::npos;
    }();
    return available;
}

ServerTls::Loaded ServerTls::load(const config::Config& config, TicketKeys* keys,
                                  const CertificateFeed* feed) {
    Loaded loaded;
    std::unique_ptr<ServerTls> server(new ServerTls());
    server->feed_ = feed;
    server->policy_ = *config.tls;
    server->offer_h2_ = config.http2.enabled;
    server->keys_ = keys;
    for (const config::SiteConfig& site : config.sites) server->fed_sites_.push_back(site.acme);
    server->fed_versions_.assign(config.sites.size(), 0);
    server->fed_contexts_.assign(config.sites.size(), nullptr);
    bool ciphers_refused = false;
    for (const config::CertificateFiles& files : config.tls->certificates)
        server->add_certificate(files, config, keys, loaded, ciphers_refused);
    server->shared_certificates_ = server->certificates_.size();
    // A site's certificate, for the names of that site (SNI), before any
    // [tls] certificate that covers them too.
    server->site_contexts_.assign(config.sites.size(), nullptr);
    for (const config::SocketAddress* listener : config::listeners_of(config)) {
        config::SiteNames& names = server->listener_names_.emplace_back();
        for (size_t site = 0; site < config.sites.size(); ++site)
            if (config::site_answers_on(config.sites[site], *listener))
                names.add(config.sites[site], static_cast<int>(site));
    }
    for (size_t site = 0; site < config.sites.size(); ++site) {
        if (!config.sites[site].certificate) continue;
        if (server->add_certificate(*config.sites[site].certificate, config, keys, loaded,
                                    ciphers_refused))
            server->site_contexts_[site] = server->certificates_.back().context;
    }
    bool any_fed = std::find(server->fed_sites_.begin(), server->fed_sites_.end(), true) !=
                   server->fed_sites_.end();
    if (feed && any_fed && !server->certificates_.empty())
        SSL_CTX_set_client_hello_cb(server->certificates_.front().context, on_client_hello,
                                    server.get());
    if (loaded.errors.empty()) loaded.tls = std::move(server);
    return loaded;
}

bool ServerTls::add_certificate(const config::CertificateFiles& files, const config::Config& config,
                                TicketKeys* keys, Loaded& loaded, bool& ciphers_refused) {
    const config::TlsConfig& tls = *config.tls;
    auto error = [&](config::SourcePosition where, std::string message) {
        loaded.errors.push_back({config.path, where, std::move(message)});
        return false;
    };
    clear_openssl_errors();
    SSL_CTX* context = SSL_CTX_new(TLS_server_method());
    if (!context)
        return error(files.where, "cannot create a TLS context: " + take_openssl_errors());
    certificates_.push_back({context, {}, files.cert});
    // Once, and the files are still checked: every problem is reported.
    if (!apply_policy(context, tls, config.http2.enabled, keys)) {
        if (!ciphers_refused)
            error(tls.ciphers_where, "tls.ciphers: no usable cipher in \"" + tls.ciphers + "\" (" +
                                         take_openssl_errors() + ")");
        ciphers_refused = true;
        clear_openssl_errors();
    }
    if (std::string why = use_certificate_files(context, files); !why.empty())
        return error(files.where, why);
    X509* leaf = SSL_CTX_get0_certificate(context);
    certificates_.back().names = names_of(leaf);
    if (std::string warning = expiry_warning(leaf, files.cert); !warning.empty())
        loaded.warnings.push_back(std::move(warning));
    SSL_CTX_set_tlsext_servername_callback(context, on_server_name);
    SSL_CTX_set_tlsext_servername_arg(context, this);
    return true;
}

ServerTls::~ServerTls() {
    for (Certificate& certificate : certificates_) SSL_CTX_free(certificate.context);
    for (SSL_CTX* context : fed_contexts_) SSL_CTX_free(context);
}

SSL_CTX* ServerTls::fed_context(size_t site) const {
    uint64_t version = feed_->version(site);
    if (version == fed_versions_[site]) return fed_contexts_[site];
    std::string chain, key;
    if (!feed_->read(site, chain, key, version)) return fed_contexts_[site];
    fed_versions_[site] = version;  // once per version, even when it does not load
    SSL_CTX* context = SSL_CTX_new(TLS_server_method());
    if (!context || !apply_policy(context, policy_, offer_h2_, keys_) ||
        !use_pem(context, chain, key)) {
        SSL_CTX_free(context);
        clear_openssl_errors();
        return fed_contexts_[site];  // the last good one
    }
    SSL_CTX_set_tlsext_servername_callback(context, on_server_name);
    SSL_CTX_set_tlsext_servername_arg(context, const_cast<ServerTls*>(this));
    if (stapler_) stapler_->install(context, fed_slot(site));
    // Sessions that chose the old context hold a reference of their own.
    SSL_CTX_free(fed_contexts_[site]);
    fed_contexts_[site] = context;
    return context;
}

std::vector<ServerTls::FileCertificate> ServerTls::file_certificates() const {
    std::vector<FileCertificate> files;
    for (size_t slot = 0; slot < certificates_.size(); ++slot)
        files.push_back({slot, certificates_[slot].context, certificates_[slot].file,
                         certificates_[slot].names});
    return files;
}

void ServerTls::staple_from(const StapleFeed& feed) {
    stapler_ = std::make_unique<Stapler>(feed, staple_slots());
    for (size_t slot = 0; slot < certificates_.size(); ++slot)
        stapler_->install(certificates_[slot].context, slot);
}

SSL* ServerTls::new_session(int fd, size_t listener) const {
    SSL* ssl = SSL_new(certificates_.front().context);
    // For on_server_name: the listener whose sites the SNI is matched against.
    if (ssl) SSL_set_app_data(ssl, reinterpret_cast<void*>(static_cast<uintptr_t>(listener)));
    if (ssl && SSL_set_fd(ssl, fd) != 1) {
        SSL_free(ssl);
        return nullptr;
    }
    if (ssl) SSL_set_accept_state(ssl);
    return ssl;
}

SSL_CTX* ServerTls::context_for(std::string_view host, size_t listener) const {
    std::string name = lower(host);
    if (!name.empty() && name.back() == '.') name.pop_back();
    int site = listener < listener_names_.size() ? listener_names_[listener].match(name) : -1;
    if (site >= 0 && feed_ && fed_sites_[static_cast<size_t>(site)])
        if (SSL_CTX* fed = fed_context(static_cast<size_t>(site))) return fed;
    if (site >= 0 && site_contexts_[static_cast<size_t>(site)])
        return site_contexts_[static_cast<size_t>(site)];
    // A site's certificate is for its site only (nginx: the default
    // server's certificate for a name no server of the listener has).
    std::span<const Certificate> shared(certificates_.data(), shared_certificates_);
    for (const Certificate& certificate : shared)
        for (const std::string& covered : certificate.names)
            if (covered == name) return certificate.context;
    for (const Certificate& certificate : shared)
        for (const std::string& covered : certificate.names)
            if (wildcard_covers(covered, name)) return certificate.context;
    return certificates_.front().context;
}

int ServerTls::on_client_hello(SSL* ssl, int*, void* self) {
    std::string name, chain, key;
    if (!asks_for_acme_tls(ssl, name)) return SSL_CLIENT_HELLO_SUCCESS;
    const CertificateFeed& feed = *static_cast<const ServerTls*>(self)->feed_;
    // A name not being validated: the handshake goes on as any other, and
    // without ALPN (no protocol in common).
    if (!feed.challenge_certificate(name, chain, key)) return SSL_CLIENT_HELLO_SUCCESS;
    if (SSL_CTX* context = challenge_context(chain, key)) {
        SSL_set_SSL_CTX(ssl, context);
        SSL_CTX_free(context);  // the session holds it now
    }
    return SSL_CLIENT_HELLO_SUCCESS;
}

int ServerTls::on_server_name(SSL* ssl, int*, void* self) {
    const char* host = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
    if (host == nullptr) return SSL_TLSEXT_ERR_NOACK;
    auto listener = static_cast<size_t>(reinterpret_cast<uintptr_t>(SSL_get_app_data(ssl)));
    SSL_CTX* chosen = static_cast<const ServerTls*>(self)->context_for(host, listener);
    if (chosen != SSL_get_SSL_CTX(ssl)) SSL_set_SSL_CTX(ssl, chosen);
    return SSL_TLSEXT_ERR_OK;
}

}  // namespace portico::tls
