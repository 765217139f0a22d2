// The cryptography ACME needs, with OpenSSL 3: ECDSA P-256 keys (the
// account's and each certificate's), JWS ES256 signatures (RFC 7515/7518),
// the JWK thumbprint (RFC 7638), CSRs, and reading a certificate's dates.
#pragma once

#include <openssl/evp.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace portico::acme {

using KeyPtr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;

std::string base64url(std::string_view bytes);

// A new ECDSA P-256 key, or nullptr.
KeyPtr new_key();
std::string key_pem(EVP_PKEY* key);
// A key from PEM text, or nullptr.
KeyPtr key_from_pem(std::string_view pem);

// The public key as a JWK, members in the order RFC 7638 hashes them.
std::string jwk_json(EVP_PKEY* key);
// base64url(SHA-256(jwk_json)): the account's part of a key authorization.
std::string jwk_thumbprint(EVP_PKEY* key);
// The JWS signature of "PROTECTED.PAYLOAD" (both base64url) with ES256:
// r and s, 32 bytes each (not DER), base64url; empty on failure.
std::string es256_signature(EVP_PKEY* key, std::string_view signing_input);

// A DER CSR for `names` (the first also the subject's CN), base64url.
std::string csr_base64url(EVP_PKEY* key, const std::vector<std::string>& names);

// TLS-ALPN-01 (RFC 8737 3): a self-signed certificate for `name` with the
// critical acmeIdentifier extension holding SHA-256(key_authorization),
// and its new key; both PEM, empty on failure.
struct PemPair {
    std::string chain;
    std::string key;
};
PemPair tls_alpn_certificate(const std::string& name, const std::string& key_authorization);

// What the served certificate says of itself.
struct CertificateFacts {
    int64_t not_before = 0;  // Unix seconds
    int64_t not_after = 0;
    std::vector<std::string> names;  // its DNS SANs, lower case
};
// The leaf (the first certificate) of a PEM chain; false when it has none.
bool leaf_facts(std::string_view chain_pem, CertificateFacts& out);

}  // namespace portico::acme
