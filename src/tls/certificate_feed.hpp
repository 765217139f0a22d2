// Certificates that arrive while the workers run (ACME): the TLS layer asks
// a feed for a site's newest certificate as a handshake names that site, so
// a new one is served without a reload and without touching a connection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace portico::tls {

class CertificateFeed {
public:
    virtual ~CertificateFeed() = default;
    // Changes whenever `site`'s certificate does; 0 while it has none. One
    // atomic load: it is asked on every handshake for the site.
    virtual uint64_t version(size_t site) const = 0;
    // The chain (leaf first) and its key, PEM, with the version they are;
    // false while the site has none.
    virtual bool read(size_t site, std::string& chain, std::string& key,
                      uint64_t& version) const = 0;
    // TLS-ALPN-01 (RFC 8737): the self-signed certificate and key that
    // prove `name` (lower case) to the CA, while it is being validated.
    virtual bool challenge_certificate(std::string_view name, std::string& chain,
                                       std::string& key) const = 0;
};

}  // namespace portico::tls
