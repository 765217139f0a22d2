// TLS-ALPN-01 (RFC 8737) on the TLS listeners: a CA validating a name
// connects with SNI for that name and ALPN "acme-tls/1" alone, and must get
// a self-signed certificate carrying the key authorization's digest. Also
// the PEM loading that contexts made in a worker (fed certificates) share.
#pragma once

#include <openssl/ssl.h>

#include <string>

namespace portico::tls {

// From a ClientHello callback: whether the client offers exactly
// "acme-tls/1", with the SNI name it sends (lower case) in `name`.
bool asks_for_acme_tls(SSL* ssl, std::string& name);

// A context serving `chain` and `key` (PEM) that selects "acme-tls/1" and
// never changes its certificate by SNI; nullptr when they do not load.
SSL_CTX* challenge_context(const std::string& chain, const std::string& key);

// A chain (leaf first) and its key from PEM text into `context`.
bool use_pem(SSL_CTX* context, const std::string& chain, const std::string& key);

}  // namespace portico::tls
