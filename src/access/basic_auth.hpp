// auth = { realm, htpasswd }: HTTP Basic authentication (RFC 7617, nginx's
// auth_basic), the last of a location's admission checks. Credentials that
// are missing, malformed, of another scheme, of an unknown user or with a
// wrong password are all the same 401 with the realm's challenge; the
// password is checked by the worker's PasswordVerifier (off the loop,
// remembered for a while).
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>

#include "access/password_verifier.hpp"
#include "config/config.hpp"
#include "http/admission.hpp"
#include "metrics/worker_counters.hpp"

namespace portico::access {

// `Basic realm="REALM"`, the realm a quoted-string (RFC 9110 5.6.4): '"'
// and '\' escaped.
std::string basic_challenge(std::string_view realm);

class BasicAuthCheck final : private PasswordWaiter {
public:
    using Verdict = http::AdmissionVerdict;

    // `location_index`: the location's index in Config::locations, for the counters.
    BasicAuthCheck(const config::AuthConfig& auth, PasswordVerifier& verifier,
                   size_t location_index, metrics::WorkerCounters& counters);
    Verdict check(http::Exchange& exchange, http::Admission& admission);

private:
    void on_verified(http::Waiting& waiting, bool right) const override;
    void refuse(http::Exchange& exchange) const;

    std::string challenge_;
    // The htpasswd users; a user listed twice is its first line's (nginx).
    std::unordered_map<std::string_view, const config::HtpasswdEntry*> users_;
    PasswordVerifier& verifier_;
    size_t location_index_;
    metrics::WorkerCounters& counters_;
    std::string decoded_;  // the credentials of the request being checked, wiped after
};

}  // namespace portico::access
