#include "tls/ocsp_stapling.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <ctime>

namespace portico::tls {

CertificateDigest digest_of(X509* certificate) {
    CertificateDigest digest{};
    unsigned int length = 0;
    if (certificate) X509_digest(certificate, EVP_sha256(), digest.data(), &length);
    return digest;
}

Stapler::Stapler(const StapleFeed& feed, size_t slots) : feed_(feed) {
    targets_.resize(slots);
}

void Stapler::install(SSL_CTX* context, size_t slot) {
    if (slot >= targets_.size()) return;
    if (!targets_[slot]) targets_[slot] = std::make_unique<Target>();
    Target& target = *targets_[slot];
    target = Target{};
    target.feed = &feed_;
    target.slot = slot;
    target.certificate = digest_of(SSL_CTX_get0_certificate(context));
    SSL_CTX_set_tlsext_status_cb(context, on_status);
    SSL_CTX_set_tlsext_status_arg(context, &target);
}

// Called by OpenSSL only for a client hello with status_request, after the
// certificate was chosen (SNI): `target` is the chosen context's.
int Stapler::on_status(SSL* ssl, void* arg) {
    Target& target = *static_cast<Target*>(arg);
    uint64_t version = target.feed->version(target.slot);
    if (version != target.version) {
        CertificateDigest about{};
        target.response.clear();
        if (target.feed->read(target.slot, target.response, about, target.next_update, version) &&
            about != target.certificate)
            target.response.clear();
        target.version = version;
    }
    bool expired = target.next_update != 0 && std::time(nullptr) >= target.next_update;
    if (target.response.empty() || expired) return SSL_TLSEXT_ERR_NOACK;
    // OpenSSL frees the copy with the session's handshake.
    auto* copy =
        static_cast<unsigned char*>(OPENSSL_memdup(target.response.data(), target.response.size()));
    if (!copy) return SSL_TLSEXT_ERR_NOACK;
    SSL_set_tlsext_status_ocsp_resp(ssl, copy, static_cast<long>(target.response.size()));
    return SSL_TLSEXT_ERR_OK;
}

}  // namespace portico::tls
