// OCSP responses that arrive while the workers run: fetched outside the
// workers (acme/staples.hpp) and read here at the handshakes that ask for
// one (status_request), so a new response is stapled without a reload.
#pragma once

#include <openssl/x509.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace portico::tls {

// A certificate's SHA-256: which certificate a response is about, so a
// response never goes out with another certificate (an ACME site's
// renewed one, a file changed on disk).
using CertificateDigest = std::array<unsigned char, 32>;
CertificateDigest digest_of(X509* certificate);

class StapleFeed {
public:
    virtual ~StapleFeed() = default;
    // Changes whenever `slot`'s response does; 0 while it has none. One
    // atomic load: it is asked at each handshake that wants a staple.
    virtual uint64_t version(size_t slot) const = 0;
    // The DER response, the certificate it is about and its nextUpdate
    // (Unix seconds, 0: none given), with the version they are; false while
    // the slot has no response.
    virtual bool read(size_t slot, std::string& response, CertificateDigest& certificate,
                      int64_t& next_update, uint64_t& version) const = 0;
};

}  // namespace portico::tls
