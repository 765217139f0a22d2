#include "rules/redirect_step.hpp"

#include "http/redirect_response.hpp"
#include "http/status.hpp"
#include "http/template_expand.hpp"

namespace portico::rules {

RedirectStep::RedirectStep(const config::RedirectConfig& redirect,
                           const config::LocationConfig& location)
    : redirect_(redirect) {
    if (location.match == config::MatchKind::regex && redirect.to.uses(config::Variable::capture))
        captures_.emplace(location.pattern);
}

http::StepResult RedirectStep::answer(http::Request& request, http::Exchange& client) {
    http::Captures captures;
    if (captures_ && captures_->match(request.normalized_path)) captures = captures_->groups();
    target_.clear();
    http::expand(redirect_.to, request, client.client_address(), captures, target_);
    http::answer_redirect(client, redirect_.status, target_, http::status_text(redirect_.status));
    return http::StepResult::answered;
}

}  // namespace portico::rules
