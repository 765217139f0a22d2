// OCSP (RFC 6960) for stapling: the request for a certificate, and the
// checks a response must pass before it is stapled (signed by the issuer
// or a responder the issuer delegated to, about this certificate, current).
#pragma once

#include <openssl/x509.h>

#include <cstdint>
#include <string>

namespace portico::acme {

// The first OCSP responder URL of `leaf`'s Authority Information Access,
// or "".
std::string ocsp_responder_of(X509* leaf);

// The certificate of `chain` (the leaf's chain, leaf excluded) that issued
// `leaf`, or nullptr.
X509* issuer_in(X509* leaf, STACK_OF(X509) * chain);

// The DER request for `leaf` issued by `issuer` (no nonce: a stapled
// response is shared by every client, as nginx's is); "" when OpenSSL
// could not make one.
std::string ocsp_request(X509* leaf, X509* issuer);

struct OcspAnswer {
    std::string status;  // "good" or "revoked"
    int64_t this_update = 0;
    int64_t next_update = 0;  // 0: none given
};

// Checks the DER `response` for `leaf`: successful, verified against
// `issuer` (with `chain` to find the signer), status good or revoked (a
// revoked certificate's response is stapled as it is: it tells the client
// the truth), current. "" and `answer` set, or why it is refused.
std::string check_ocsp_response(const std::string& response, X509* leaf, X509* issuer,
                                STACK_OF(X509) * chain, OcspAnswer& answer);

}  // namespace portico::acme
