#include "access/basic_auth.hpp"

#include <openssl/crypto.h>

#include "access/basic_credentials.hpp"
#include "http/status.hpp"

namespace portico::access {

namespace {

constexpr std::string_view refusal_name = "auth";

// A short response with one header of its own.
void respond_with(http::Exchange& exchange, int status, std::string_view header,
                  std::string_view value) {
    std::string_view body = http::status_text(status);
    exchange.begin_response(status, body.size());
    exchange.add_header(header, value);
    exchange.add_header("Content-Type", "text/plain; charset=utf-8");
    exchange.send_body_pieces({&body, 1}, true);
}

}  // namespace

std::string basic_challenge(std::string_view realm) {
    std::string challenge = "Basic realm=\"";
    for (char c : realm) {
        if (c == '"' || c == '\\') challenge += '\\';
        challenge += c;
    }
    challenge += '"';
    return challenge;
}

BasicAuthCheck::BasicAuthCheck(const config::AuthConfig& auth, PasswordVerifier& verifier,
                               size_t location_index, metrics::WorkerCounters& counters)
    : challenge_(basic_challenge(auth.realm)),
      verifier_(verifier),
      location_index_(location_index),
      counters_(counters) {
    for (const config::HtpasswdEntry& entry : auth.users) users_.emplace(entry.user, &entry);
}

http::AdmissionVerdict BasicAuthCheck::check(http::Exchange& exchange, http::Admission& admission) {
    BasicCredentials credentials;
    auto user = users_.end();
    // A password with a NUL byte is never right: crypt(3) would stop at it.
    if (parse_basic_credentials(exchange.request().header("authorization"), decoded_,
                                credentials) &&
        credentials.password.find('\0') == std::string_view::npos)
        user = users_.find(credentials.user);
    PasswordVerifier::Answer answer = PasswordVerifier::Answer::wrong;
    if (user != users_.end())
        answer = verifier_.verify(credentials.password, *user->second, admission, *this);
    OPENSSL_cleanse(decoded_.data(), decoded_.size());
    switch (answer) {
    case PasswordVerifier::Answer::right:
        return Verdict::pass;
    case PasswordVerifier::Answer::later:
        return Verdict::wait;
    case PasswordVerifier::Answer::busy:
        exchange.request().refused_by = refusal_name;
        respond_with(exchange, 503, "Retry-After", "1");
        return Verdict::answered;
    case PasswordVerifier::Answer::wrong:
        break;
    }
    refuse(exchange);
    return Verdict::answered;
}

void BasicAuthCheck::on_verified(http::Waiting& waiting, bool right) const {
    if (right) {
        waiting.pass();
    } else if (http::Exchange* exchange = waiting.answer()) {
        refuse(*exchange);
    }
}

void BasicAuthCheck::refuse(http::Exchange& exchange) const {
    exchange.request().refused_by = refusal_name;
    counters_.count_access_denied(location_index_, metrics::AccessDenial::auth);
    respond_with(exchange, 401, "WWW-Authenticate", challenge_);
}

}  // namespace portico::access
