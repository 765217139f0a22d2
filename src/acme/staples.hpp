// OCSP stapling's fetcher, run by the ACME process beside the renewals
// (worker/acme_process.cpp): for every served certificate whose issuer
// names an OCSP responder (or with [tls] ocsp_responder), the response is
// fetched, checked against the issuer (acme/ocsp.hpp) and published on the
// staple board, where the workers pick it up at their next handshake. An
// ACME site's certificate is followed as it is renewed.
//
// The schedule: a response is fetched again at half its validity, or five
// minutes before its nextUpdate when that comes first, never sooner than
// ten seconds after the last fetch (a responder giving a one-minute
// validity is not hammered); an hour later when it gives no nextUpdate. A
// failed fetch is retried after 2 s, 4 s, ... up to five minutes, and the
// last good response stays stapled until its nextUpdate.
#pragma once

#include <openssl/x509.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "acme/board.hpp"
#include "acme/https_client.hpp"
#include "acme/staple_board.hpp"
#include "config/config.hpp"
#include "tls/server_tls.hpp"

namespace portico::acme {

// When the next fetch is due, in Unix milliseconds.
struct StaplePolicy {
    // After a good response fetched at `now_ms` (this/next update in Unix
    // seconds, next_update 0: none given).
    static int64_t refresh_due_ms(int64_t now_ms, int64_t this_update, int64_t next_update);
    // After `failures` failed fetches in a row (1 or more).
    static int64_t retry_ms(unsigned failures);
};

class Staples {
public:
    // `certificates`: the ACME board (nullptr without [acme]).
    Staples(const config::Config& config, const tls::ServerTls& tls, StapleBoard& board,
            const Board* certificates);
    ~Staples();
    // Whether `config` has a certificate to staple: ocsp_stapling on and a
    // certificate naming a responder (or ocsp_responder set), or an ACME site.
    static bool wanted(const config::Config& config, const tls::ServerTls& tls);

    // When the next fetch is due (Unix milliseconds), now when an ACME
    // site's certificate changed; INT64_MAX when nothing is to be fetched.
    int64_t due_ms() const;
    // Fetches what is due (each request bounded by a timeout).
    void run_due();

private:
    struct Subject;
    void follow_certificate(Subject& subject, const std::string& chain);
    void fetch(Subject& subject);
    void failed(Subject& subject, const std::string& error);
    void publish(Subject& subject);

    StapleBoard& board_;
    const Board* certificates_;
    std::string responder_;  // [tls] ocsp_responder, "": each certificate's own
    std::vector<std::unique_ptr<Subject>> subjects_;
    HttpsClient http_;
};

}  // namespace portico::acme
