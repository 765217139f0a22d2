// The ACME process's schedule: for each site with `acme = true`, the stored
// certificate reused at start when it still has more than a third of its
// lifetime, a new order at two thirds of the lifetime (plus up to a
// thirtieth of it, at random, so sites and servers do not all renew at
// once), and on an error a retry after an exponential back-off (2 s, 4 s,
// ... up to an hour) or the CA's Retry-After when that is longer. A site
// whose renewal fails keeps serving its last good certificate.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "acme/board.hpp"
#include "acme/crypto.hpp"
#include "acme/https_client.hpp"
#include "acme/protocol.hpp"
#include "config/config.hpp"

namespace portico::acme {

// When each step is due, in Unix milliseconds.
struct RenewalPolicy {
    // Two thirds of [not_before, not_after], plus `jitter` (0..1) of a thirtieth.
    static int64_t renewal_due_ms(int64_t not_before, int64_t not_after, double jitter);
    // After `failures` errors in a row (1 or more), and what the CA asked.
    static int64_t backoff_ms(unsigned failures, int64_t retry_after_seconds);
};

class Renewals {
public:
    Renewals(const config::Config& config, Board& board);
    // When the next order or retry is due (Unix milliseconds); INT64_MAX
    // when there is no site to order for.
    int64_t due_ms() const;
    // Orders what is due (the ACME process's loop calls it).
    void run_due();

private:
    struct Site {
        size_t index;  // in config::Config::sites and the board
        std::vector<std::string> names;
        std::string chain_path, key_path;
        int64_t due_ms = 0;
        unsigned failures = 0;
        // HTTP-01 first; after a failed validation the other type, in a new order.
        ChallengeType challenge = ChallengeType::http01;
        std::string last_error;
        int64_t not_after = 0;  // of the certificate served, 0: none yet
    };

    void reuse_stored(Site& site);
    void renew(Site& site);
    // Schedules the retry (back-off, Retry-After, the other challenge type
    // after a failed validation) and logs the error when it changed.
    void failed(Site& site, const AcmeError& error);
    void served(Site& site, const std::string& chain, const std::string& key,
                const CertificateFacts& facts);
    void publish_state(const Site& site);
    bool ensure_account_key();

    const config::AcmeConfig& acme_;
    Board& board_;
    std::vector<Site> sites_;
    HttpsClient http_;
    KeyPtr account_key_{nullptr, EVP_PKEY_free};
    std::unique_ptr<AcmeSession> session_;
};

}  // namespace portico::acme
