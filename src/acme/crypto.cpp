#include "acme/crypto.hpp"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <cctype>

namespace portico::acme {

namespace {

struct BioDeleter {
    void operator()(BIO* bio) const { BIO_free(bio); }
};
using BioPtr = std::unique_ptr<BIO, BioDeleter>;

std::string bio_text(BIO* bio) {
    char* data = nullptr;
    long length = BIO_get_mem_data(bio, &data);
    return std::string(data, static_cast<size_t>(std::max(0L, length)));
}

// A P-256 coordinate as its fixed 32 bytes.
std::string coordinate(EVP_PKEY* key, const char* name) {
    BIGNUM* number = nullptr;
    if (EVP_PKEY_get_bn_param(key, name, &number) != 1) return {};
    unsigned char bytes[32];
    int written = BN_bn2binpad(number, bytes, sizeof bytes);
    BN_free(number);
    return written == 32 ? std::string(reinterpret_cast<char*>(bytes), 32) : std::string();
}

int64_t unix_time(const ASN1_TIME* time) {
    struct tm parts {};
    if (ASN1_TIME_to_tm(time, &parts) != 1) return 0;
    return static_cast<int64_t>(timegm(&parts));
}

}  // namespace

std::string base64url(std::string_view bytes) {
    std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
    int length = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                 reinterpret_cast<const unsigned char*>(bytes.data()),
                                 static_cast<int>(bytes.size()));
    out.resize(static_cast<size_t>(length));
    while (!out.empty() && out.back() == '=') out.pop_back();
    for (char& c : out) c = c == '+' ? '-' : c == '/' ? '_' : c;
    return out;
}

KeyPtr new_key() {
    return KeyPtr(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"), EVP_PKEY_free);
}

std::string key_pem(EVP_PKEY* key) {
    BioPtr bio(BIO_new(BIO_s_mem()));
    if (!PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr)) return {};
    return bio_text(bio.get());
}

KeyPtr key_from_pem(std::string_view pem) {
    BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
    return KeyPtr(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr), EVP_PKEY_free);
}

std::string jwk_json(EVP_PKEY* key) {
    return R"({"crv":"P-256","kty":"EC","x":")" +
           base64url(coordinate(key, OSSL_PKEY_PARAM_EC_PUB_X)) + R"(","y":")" +
           base64url(coordinate(key, OSSL_PKEY_PARAM_EC_PUB_Y)) + R"("})";
}

std::string jwk_thumbprint(EVP_PKEY* key) {
    std::string jwk = jwk_json(key);
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char*>(jwk.data()), jwk.size(), digest);
    return base64url({reinterpret_cast<char*>(digest), sizeof digest});
}

std::string es256_signature(EVP_PKEY* key, std::string_view signing_input) {
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(),
                                                                    EVP_MD_CTX_free);
    size_t length = 0;
    const auto* input = reinterpret_cast<const unsigned char*>(signing_input.data());
    if (!context || EVP_DigestSignInit(context.get(), nullptr, EVP_sha256(), nullptr, key) != 1 ||
        EVP_DigestSign(context.get(), nullptr, &length, input, signing_input.size()) != 1)
        return {};
    std::vector<unsigned char> der(length);
    if (EVP_DigestSign(context.get(), der.data(), &length, input, signing_input.size()) != 1)
        return {};
    const unsigned char* cursor = der.data();
    ECDSA_SIG* signature = d2i_ECDSA_SIG(nullptr, &cursor, static_cast<long>(length));
    if (!signature) return {};
    unsigned char raw[64];
    bool good = BN_bn2binpad(ECDSA_SIG_get0_r(signature), raw, 32) == 32 &&
                BN_bn2binpad(ECDSA_SIG_get0_s(signature), raw + 32, 32) == 32;
    ECDSA_SIG_free(signature);
    return good ? base64url({reinterpret_cast<char*>(raw), sizeof raw}) : std::string();
}

std::string csr_base64url(EVP_PKEY* key, const std::vector<std::string>& names) {
    std::unique_ptr<X509_REQ, decltype(&X509_REQ_free)> request(X509_REQ_new(), X509_REQ_free);
    if (!request || names.empty()) return {};
    X509_REQ_set_version(request.get(), 0);
    X509_NAME* subject = X509_REQ_get_subject_name(request.get());
    X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>(names.front().c_str()), -1,
                               -1, 0);
    std::string alternatives;
    for (const std::string& name : names)
        alternatives += (alternatives.empty() ? "DNS:" : ",DNS:") + name;
    STACK_OF(X509_EXTENSION)* extensions = sk_X509_EXTENSION_new_null();
    X509_EXTENSION* san =
        X509V3_EXT_conf_nid(nullptr, nullptr, NID_subject_alt_name, alternatives.c_str());
    bool good = san && sk_X509_EXTENSION_push(extensions, san) &&
                X509_REQ_add_extensions(request.get(), extensions) == 1 &&
                X509_REQ_set_pubkey(request.get(), key) == 1 &&
                X509_REQ_sign(request.get(), key, EVP_sha256()) > 0;
    sk_X509_EXTENSION_pop_free(extensions, X509_EXTENSION_free);
    if (!good) return {};
    unsigned char* der = nullptr;
    int length = i2d_X509_REQ(request.get(), &der);
    if (length <= 0) return {};
    std::string encoded = base64url({reinterpret_cast<char*>(der), static_cast<size_t>(length)});
    OPENSSL_free(der);
    return encoded;
}

PemPair tls_alpn_certificate(const std::string& name, const std::string& key_authorization) {
    KeyPtr key = new_key();
    std::unique_ptr<X509, decltype(&X509_free)> certificate(X509_new(), X509_free);
    if (!key || !certificate) return {};
    X509_set_version(certificate.get(), 2);
    ASN1_INTEGER_set(X509_get_serialNumber(certificate.get()), 1);
    X509_gmtime_adj(X509_getm_notBefore(certificate.get()), -3600);
    X509_gmtime_adj(X509_getm_notAfter(certificate.get()), 7 * 86400);
    X509_NAME* subject = X509_get_subject_name(certificate.get());
    X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>(name.c_str()), -1, -1, 0);
    X509_set_issuer_name(certificate.get(), subject);
    X509_set_pubkey(certificate.get(), key.get());
    // extnValue: the DER of `Authorization ::= OCTET STRING (SIZE (32))`.
    unsigned char value[2 + SHA256_DIGEST_LENGTH] = {0x04, SHA256_DIGEST_LENGTH};
    SHA256(reinterpret_cast<const unsigned char*>(key_authorization.data()),
           key_authorization.size(), value + 2);
    ASN1_OCTET_STRING* wrapped = ASN1_OCTET_STRING_new();
    ASN1_OBJECT* acme_identifier = OBJ_txt2obj("1.3.6.1.5.5.7.1.31", 1);
    X509_EXTENSION* identifier = nullptr;
    if (wrapped && acme_identifier && ASN1_OCTET_STRING_set(wrapped, value, sizeof value) == 1)
        identifier = X509_EXTENSION_create_by_OBJ(nullptr, acme_identifier, 1, wrapped);
    X509_EXTENSION* san =
        X509V3_EXT_conf_nid(nullptr, nullptr, NID_subject_alt_name, ("DNS:" + name).c_str());
    bool good = identifier && san && X509_add_ext(certificate.get(), identifier, -1) == 1 &&
                X509_add_ext(certificate.get(), san, -1) == 1 &&
                X509_sign(certificate.get(), key.get(), EVP_sha256()) > 0;
    X509_EXTENSION_free(identifier);
    X509_EXTENSION_free(san);
    ASN1_OBJECT_free(acme_identifier);
    ASN1_OCTET_STRING_free(wrapped);
    BioPtr bio(BIO_new(BIO_s_mem()));
    if (!good || !PEM_write_bio_X509(bio.get(), certificate.get())) return {};
    return {bio_text(bio.get()), key_pem(key.get())};
}

bool leaf_facts(std::string_view chain_pem, CertificateFacts& out) {
    BioPtr bio(BIO_new_mem_buf(chain_pem.data(), static_cast<int>(chain_pem.size())));
    std::unique_ptr<X509, decltype(&X509_free)> leaf(
        PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr), X509_free);
    if (!leaf) return false;
    out.not_before = unix_time(X509_get0_notBefore(leaf.get()));
    out.not_after = unix_time(X509_get0_notAfter(leaf.get()));
    out.names.clear();
    auto* alternatives = static_cast<GENERAL_NAMES*>(
        X509_get_ext_d2i(leaf.get(), NID_subject_alt_name, nullptr, nullptr));
    for (int i = 0; alternatives && i < sk_GENERAL_NAME_num(alternatives); ++i) {
        const GENERAL_NAME* name = sk_GENERAL_NAME_value(alternatives, i);
        if (name->type != GEN_DNS) continue;
        std::string text(reinterpret_cast<const char*>(ASN1_STRING_get0_data(name->d.dNSName)),
                         static_cast<size_t>(ASN1_STRING_length(name->d.dNSName)));
        for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        out.names.push_back(std::move(text));
    }
    GENERAL_NAMES_free(alternatives);
    return out.not_after > out.not_before;
}

}  // namespace portico::acme
