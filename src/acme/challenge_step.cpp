#include "acme/challenge_step.hpp"

#include "http/https_redirect.hpp"

namespace portico::acme {

http::StepResult ChallengeStep::answer(http::Request& request, http::Exchange& client) {
    if (request.secure || !http::is_acme_challenge(request.normalized_path))
        return http::StepResult::next;
    constexpr std::string_view prefix = "/.well-known/acme-challenge/";
    std::string_view token = std::string_view(request.normalized_path).substr(prefix.size());
    std::optional<std::string> authorization = board_.key_authorization(token);
    if (authorization)
        client.respond_text(200, *authorization);
    else
        client.respond_text(404, "No such ACME challenge.\n");
    return http::StepResult::answered;
}

}  // namespace portico::acme
