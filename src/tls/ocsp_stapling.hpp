// The workers' side of OCSP stapling: a context's status callback staples
// its certificate's newest response from the feed when the client asked
// for one (status_request) and the response is about that certificate and
// not expired; otherwise the handshake goes on without a staple, never
// fails.
#pragma once

#include <openssl/ssl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tls/staple_feed.hpp"

namespace portico::tls {

class Stapler {
public:
    Stapler(const StapleFeed& feed, size_t slots);
    Stapler(const Stapler&) = delete;
    Stapler& operator=(const Stapler&) = delete;

    // Staples `slot`'s response at `context`'s handshakes. Installing
    // another context in a slot (an ACME site's new certificate) makes the
    // slot follow that context's certificate.
    void install(SSL_CTX* context, size_t slot);

private:
    // One slot as this worker last read it.
    struct Target {
        const StapleFeed* feed = nullptr;
        size_t slot = 0;
        CertificateDigest certificate{};  // the installed context's leaf
        uint64_t version = 0;
        std::string response;  // empty: none for this certificate
        int64_t next_update = 0;
    };
    static int on_status(SSL* ssl, void* target);

    const StapleFeed& feed_;
    std::vector<std::unique_ptr<Target>> targets_;  // per slot, made at install
};

}  // namespace portico::tls
