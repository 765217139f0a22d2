#include "tls/alpn_challenge.hpp"

#include <openssl/pem.h>

#include <algorithm>
#include <cctype>
#include <string_view>

#include "tls/openssl_error.hpp"

namespace portico::tls {

namespace {

constexpr unsigned char acme_tls_alpn[] = {10, 'a', 'c', 'm', 'e', '-', 't', 'l', 's', '/', '1'};

// Never prompt for a passphrase: the keys here are never encrypted.
int never_prompt(char*, int, int, void*) {
    return 0;
}

int select_acme_tls(SSL*, const unsigned char** out, unsigned char* out_length,
                    const unsigned char* in, unsigned int in_length, void*) {
    unsigned char* selected = nullptr;
    if (SSL_select_next_proto(&selected, out_length, acme_tls_alpn, sizeof acme_tls_alpn, in,
                              in_length) != OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_ALERT_FATAL;
    *out = selected;
    return SSL_TLSEXT_ERR_OK;
}

// The SNI callback the site contexts have would put the site's certificate back.
int keep_context(SSL*, int*, void*) {
    return SSL_TLSEXT_ERR_OK;
}

uint16_t two_bytes(const unsigned char* at) {
    return static_cast<uint16_t>(at[0] << 8 | at[1]);
}

}  // namespace

bool asks_for_acme_tls(SSL* ssl, std::string& name) {
    const unsigned char* alpn = nullptr;
    size_t alpn_length = 0;
    if (SSL_client_hello_get0_ext(ssl, TLSEXT_TYPE_application_layer_protocol_negotiation, &alpn,
                                  &alpn_length) != 1 ||
        alpn_length != 2 + sizeof acme_tls_alpn || two_bytes(alpn) != sizeof acme_tls_alpn ||
        !std::equal(acme_tls_alpn, acme_tls_alpn + sizeof acme_tls_alpn, alpn + 2))
        return false;
    // server_name: a list (2 bytes of length) of (type 0, 2 bytes of length, name).
    const unsigned char* sni = nullptr;
    size_t sni_length = 0;
    if (SSL_client_hello_get0_ext(ssl, TLSEXT_TYPE_server_name, &sni, &sni_length) != 1 ||
        sni_length < 5 || sni[2] != TLSEXT_NAMETYPE_host_name)
        return false;
    size_t length = two_bytes(sni + 3);
    if (length == 0 || 5 + length > sni_length) return false;
    name.assign(reinterpret_cast<const char*>(sni + 5), length);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return true;
}

SSL_CTX* challenge_context(const std::string& chain, const std::string& key) {
    SSL_CTX* context = SSL_CTX_new(TLS_server_method());
    // RFC 8737 3: TLS 1.2 or later.
    if (!context || SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION) != 1 ||
        !use_pem(context, chain, key)) {
        SSL_CTX_free(context);
        clear_openssl_errors();
        return nullptr;
    }
    SSL_CTX_set_alpn_select_cb(context, select_acme_tls, nullptr);
    SSL_CTX_set_tlsext_servername_callback(context, keep_context);
    return context;
}

bool use_pem(SSL_CTX* context, const std::string& chain, const std::string& key) {
    BIO* chain_bio = BIO_new_mem_buf(chain.data(), static_cast<int>(chain.size()));
    BIO* key_bio = BIO_new_mem_buf(key.data(), static_cast<int>(key.size()));
    X509* leaf = PEM_read_bio_X509(chain_bio, nullptr, nullptr, nullptr);
    EVP_PKEY* private_key = PEM_read_bio_PrivateKey(key_bio, nullptr, never_prompt, nullptr);
    bool good = leaf && private_key && SSL_CTX_use_certificate(context, leaf) == 1;
    while (good) {
        X509* intermediate = PEM_read_bio_X509(chain_bio, nullptr, nullptr, nullptr);
        if (!intermediate) break;
        good = SSL_CTX_add0_chain_cert(context, intermediate) == 1;
        if (!good) X509_free(intermediate);
    }
    good = good && SSL_CTX_use_PrivateKey(context, private_key) == 1 &&
           SSL_CTX_check_private_key(context) == 1;
    X509_free(leaf);
    EVP_PKEY_free(private_key);
    BIO_free(chain_bio);
    BIO_free(key_bio);
    clear_openssl_errors();  // the end of the chain reads as an error
    return good;
}

}  // namespace portico::tls
