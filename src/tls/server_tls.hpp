// The server side of TLS for one config: an OpenSSL context per certificate,
// the choice among them by SNI, ALPN, and the protocol and cipher policy.
//
// Loaded by the master (at start, on `portico -t` and on every reload) so a
// missing file, a key that does not match its certificate or a bad cipher
// list is a config error with its line, and a reload with a broken file
// keeps the old config serving. Workers inherit the loaded contexts through
// fork(): no worker reads a key file, before or after dropping privileges.
#pragma once

#include <openssl/ssl.h>

#include <ctime>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "config/site_names.hpp"
#include "tls/certificate_feed.hpp"
#include "tls/ocsp_stapling.hpp"
#include "tls/staple_feed.hpp"

namespace portico::tls {

class TicketKeys;

class ServerTls {
public:
    struct Loaded {
        std::unique_ptr<ServerTls> tls;               // set when errors is empty
        std::vector<config::ConfigError> errors;      // FILE:LINE:COL of the entry
        std::vector<std::string> warnings;            // certificates about to expire
    };
    // `keys`: the shared ticket keys (nullptr: no tickets). `feed`: where the
    // certificates of the sites with `acme = true` come from (nullptr: none
    // yet; such a site is served with [tls]'s certificates meanwhile).
    static Loaded load(const config::Config& config, TicketKeys* keys,
                       const CertificateFeed* feed = nullptr);

    ~ServerTls();
    ServerTls(const ServerTls&) = delete;
    ServerTls& operator=(const ServerTls&) = delete;

    // A server-side session on a socket accepted on `listener`
    // (config::listeners_of's index), nullptr when OpenSSL has no memory
    // for one.
    SSL* new_session(int fd, size_t listener = 0) const;

    // The certificate of the site `host` names on `listener` (the sites'
    // names, matched as a Host is), when it has one; else the context
    // whose certificate names `host` (exact, then wildcard "*.example.com"
    // for one label); the first certificate's when none does.
    SSL_CTX* context_for(std::string_view host, size_t listener = 0) const;

    // OCSP stapling: a slot per certificate loaded from a file, then one
    // per site (its ACME certificate, whatever its version).
    struct FileCertificate {
        size_t slot;
        SSL_CTX* context;  // its leaf and chain
        std::string file;
        const std::vector<std::string>& names;
    };
    std::vector<FileCertificate> file_certificates() const;
    size_t fed_slot(size_t site) const { return certificates_.size() + site; }
    size_t staple_slots() const { return certificates_.size() + fed_sites_.size(); }
    // Staples the responses `feed` holds (set by the master before the
    // workers fork; `feed` outlives this).
    void staple_from(const StapleFeed& feed);

private:
    struct Certificate {
        SSL_CTX* context = nullptr;
        std::vector<std::string> names;  // lower case, from the SAN DNS names or else the CN
        std::string file;
    };

    ServerTls() = default;
    static int on_server_name(SSL* ssl, int* alert, void* self);
    // TLS-ALPN-01: a CA's validation handshake gets the challenge certificate.
    static int on_client_hello(SSL* ssl, int* alert, void* self);
    // The fed site's newest certificate, loaded into a context when its
    // version changed since the last handshake; nullptr while it has none.
    SSL_CTX* fed_context(size_t site) const;
    // Loads `files` into a new context of certificates_; false (with the
    // error in `loaded`) when they do not load.
    bool add_certificate(const config::CertificateFiles& files, const config::Config& config,
                         TicketKeys* keys, Loaded& loaded, bool& ciphers_refused);

    std::vector<Certificate> certificates_;  // [tls]'s, then the sites'
    size_t shared_certificates_ = 0;         // how many are [tls]'s
    // Per listener, the names of the sites answering there (site indices).
    std::vector<config::SiteNames> listener_names_;
    std::vector<SSL_CTX*> site_contexts_;  // per site: its certificate's, or nullptr
    // The fed sites' (acme = true): what each context needs to be made in
    // a worker, and per site the context of the version last read. Mutable:
    // each worker's copy (after fork) follows the feed on its own.
    const CertificateFeed* feed_ = nullptr;
    config::TlsConfig policy_;
    bool offer_h2_ = false;
    TicketKeys* keys_ = nullptr;
    std::vector<bool> fed_sites_;
    mutable std::vector<uint64_t> fed_versions_;
    mutable std::vector<SSL_CTX*> fed_contexts_;
    // Each worker's copy also staples the fed sites' new contexts.
    std::unique_ptr<Stapler> stapler_;  // nullptr: no stapling
};

// Whether the kernel can take over TLS record encryption (kTLS: the "tls"
// upper-layer protocol is available), so files can go out with SSL_sendfile.
bool kernel_tls_available();

}  // namespace portico::tls
