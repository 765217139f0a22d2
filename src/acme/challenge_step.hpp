// HTTP-01 (RFC 8555 8.3): the CA asks http://NAME/.well-known/acme-challenge/TOKEN
// and must get the key authorization the ACME process published for that
// token. A server step, before redirect_http, on the cleartext listeners.
#pragma once

#include "acme/board.hpp"
#include "http/request_step.hpp"

namespace portico::acme {

class ChallengeStep final : public http::RequestStep {
public:
    explicit ChallengeStep(const Board& board) : board_(board) {}
    // A published token: 200 with its key authorization; any other token
    // under the challenge path: 404 (never a file or an upstream's answer).
    http::StepResult answer(http::Request& request, http::Exchange& client) override;

private:
    const Board& board_;
};

}  // namespace portico::acme
