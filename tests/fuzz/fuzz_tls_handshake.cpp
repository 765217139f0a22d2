// The server side of a TLS handshake as a client's bytes drive it: portico's
// contexts (protocols, ciphers, ALPN, the SNI choice, the ticket keys and
// their callback) fed the input as the first flight, through memory BIOs.
// Two certificates are made at start (a.test with *.b.test; CN-only c.test)
// in a temporary folder, as portico would load them from disk.
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "config/config.hpp"
#include "fuzz_support.hpp"
#include "tls/server_tls.hpp"
#include "tls/ticket_keys.hpp"

namespace {

void write_self_signed(const std::string& folder, const std::string& name, const char* san) {
    EVP_PKEY* key = EVP_EC_gen("P-256");
    X509* certificate = X509_new();
    ASN1_INTEGER_set(X509_get_serialNumber(certificate), 1);
    X509_gmtime_adj(X509_getm_notBefore(certificate), 0);
    X509_gmtime_adj(X509_getm_notAfter(certificate), 60L * 60 * 24 * 365);
    X509_set_pubkey(certificate, key);
    X509_NAME* subject = X509_get_subject_name(certificate);
    X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>(name.c_str()), -1, -1, 0);
    X509_set_issuer_name(certificate, subject);
    if (san != nullptr) {
        X509V3_CTX context;
        X509V3_set_ctx(&context, certificate, certificate, nullptr, nullptr, 0);
        X509_EXTENSION* extension =
            X509V3_EXT_conf_nid(nullptr, &context, NID_subject_alt_name, san);
        X509_add_ext(certificate, extension, -1);
        X509_EXTENSION_free(extension);
    }
    X509_sign(certificate, key, EVP_sha256());
    FILE* out = std::fopen((folder + "/" + name + ".pem").c_str(), "w");
    PEM_write_X509(out, certificate);
    std::fclose(out);
    out = std::fopen((folder + "/" + name + ".key").c_str(), "w");
    PEM_write_PrivateKey(out, key, nullptr, nullptr, 0, nullptr, nullptr);
    std::fclose(out);
    X509_free(certificate);
    EVP_PKEY_free(key);
}

struct Server {
    std::unique_ptr<portico::tls::TicketKeys> keys;
    std::unique_ptr<portico::tls::ServerTls> tls;

    Server() {
        char folder[] = "/tmp/portico-fuzz-tls-XXXXXX";
        FUZZ_CHECK(mkdtemp(folder) != nullptr);
        write_self_signed(folder, "a.test", "DNS:a.test,DNS:*.b.test");
        write_self_signed(folder, "c.test", nullptr);
        portico::config::Config config;
        config.path = std::string(folder) + "/portico.toml";
        config.tls.emplace();
        for (const char* name : {"a.test", "c.test"})
            config.tls->certificates.push_back({std::string(folder) + "/" + name + ".pem",
                                                std::string(folder) + "/" + name + ".key", {}});
        std::string error;
        keys = portico::tls::TicketKeys::create(error);
        FUZZ_CHECK(keys != nullptr);
        portico::tls::ServerTls::Loaded loaded = portico::tls::ServerTls::load(config, keys.get());
        FUZZ_CHECK(loaded.errors.empty());
        tls = std::move(loaded.tls);
    }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t length) {
    static Server server;
    SSL* ssl = server.tls->new_session(-1);
    FUZZ_CHECK(ssl != nullptr);
    BIO* in = BIO_new_mem_buf(data, static_cast<int>(length));
    BIO_set_mem_eof_return(in, -1);  // no more bytes now: "want read", as a socket
    BIO* out = BIO_new(BIO_s_mem());
    SSL_set_bio(ssl, in, out);
    SSL_do_handshake(ssl);
    // Once the server answered with a handshake record (its ServerHello, so
    // the ClientHello was taken), the context in use is the one the SNI
    // choice gives for the name the client sent.
    char* answer = nullptr;
    long answered = BIO_get_mem_data(out, &answer);
    const char* name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
    if (answered > 0 && answer[0] == 0x16 && name != nullptr)
        FUZZ_CHECK(SSL_get_SSL_CTX(ssl) == server.tls->context_for(name));
    SSL_free(ssl);
    ERR_clear_error();
    return 0;
}
