// One certificate order against an ACME CA (RFC 8555): directory, nonces,
// the account (found again by its key), the order for all of a site's
// names, HTTP-01 for each authorization, finalize with a CSR, and the
// chain. Blocking, in the ACME process; every request bounded by the
// client's timeout, every wait for the CA bounded too.
#pragma once

#include <openssl/evp.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "acme/https_client.hpp"

namespace portico::acme {

// Why an order failed, and how long the CA asked us to wait (Retry-After,
// seconds; 0: it did not say).
class AcmeError : public std::runtime_error {
public:
    explicit AcmeError(const std::string& what, int64_t retry_after = 0,
                       bool validation_failed = false)
        : std::runtime_error(what),
          retry_after(retry_after),
          validation_failed(validation_failed) {}
    int64_t retry_after;
    bool validation_failed;  // the CA could not validate a name by the challenge used
};

// How the names are proven: HTTP-01 on the cleartext listeners, or
// TLS-ALPN-01 on the TLS listeners.
enum class ChallengeType { http01, tls_alpn01 };
const char* challenge_name(ChallengeType type);

// Where HTTP-01 key authorizations are published for the workers to answer
// (acme::Board), and withdrawn after validation.
struct ChallengeBoard {
    std::function<bool(const std::string& token, const std::string& key_authorization)> publish;
    std::function<void(const std::string& token)> withdraw;
    // TLS-ALPN-01: the challenge certificate for a name, and its removal.
    std::function<bool(const std::string& name, const std::string& chain, const std::string& key)>
        publish_alpn;
    std::function<void(const std::string& name)> withdraw_alpn;
};

class AcmeSession {
public:
    AcmeSession(HttpsClient& http, EVP_PKEY* account_key, std::string directory_url,
                std::string email, ChallengeBoard challenges);

    // The PEM chain (leaf first) of a new certificate for `names` with the
    // public half of `certificate_key`; throws AcmeError.
    std::string order_certificate(const std::vector<std::string>& names, EVP_PKEY* certificate_key,
                                  ChallengeType challenge);

private:
    HttpResponse send(std::string_view method, const std::string& url);
    // A JWS POST; `payload` "" is POST-as-GET. Retries a badNonce.
    HttpResponse post(const std::string& url, const std::string& payload);
    nlohmann::json post_json(const std::string& url, const std::string& payload);
    void ensure_directory_and_account();
    std::string fresh_nonce();
    void authorize(const std::string& authorization_url, ChallengeType challenge);
    // Polls `url` (POST-as-GET) while its status is one of `pending`.
    nlohmann::json poll(const std::string& url, std::initializer_list<std::string_view> pending,
                        std::string_view what);

    HttpsClient& http_;
    EVP_PKEY* account_key_;
    std::string directory_url_;
    std::string email_;
    ChallengeBoard challenges_;
    std::string thumbprint_;
    nlohmann::json directory_;
    std::string account_url_;
    std::string nonce_;
};

// Retry-After (seconds, or an HTTP date) in seconds from now; 0 when absent.
int64_t retry_after_seconds(const std::string& value);

}  // namespace portico::acme
