#include "rules/rewrite_step.hpp"

#include <utility>

#include "http/redirect_response.hpp"
#include "http/status.hpp"
#include "http/template_expand.hpp"
#include "rules/rule_path.hpp"

namespace portico::rules {

void query_after_rewrite(std::string_view own, bool has_question, std::string_view original,
                         std::string& out) {
    out.assign(own);
    if (has_question && own.empty()) return;  // "/new?": the query is dropped
    if (original.empty()) return;
    if (!out.empty()) out += '&';
    out.append(original);
}

RewriteStep::RewriteStep(const std::vector<config::RewriteRule>& rules) {
    rules_.reserve(rules.size());
    for (const config::RewriteRule& rule : rules)
        rules_.push_back({rule, RegexCaptures(rule.from)});
}

http::StepResult RewriteStep::answer(http::Request& request, http::Exchange& client) {
    for (Rule& rule : rules_) {
        if (!rule.from.match(request.normalized_path)) continue;
        result_.clear();
        http::expand(rule.config.to, request, client.client_address(), rule.from.groups(), result_);
        return apply(rule.config, request, client);
    }
    return http::StepResult::next;
}

http::StepResult RewriteStep::apply(const config::RewriteRule& rule, http::Request& request,
                                    http::Exchange& client) {
    using config::RewriteFlag;
    if (rule.flag == RewriteFlag::permanent) {
        redirect(301, request, client);
        return http::StepResult::answered;
    }
    if (rule.flag == RewriteFlag::redirect || result_.starts_with("http://") ||
        result_.starts_with("https://")) {
        redirect(302, request, client);
        return http::StepResult::answered;
    }
    size_t question = result_.find('?');
    std::string_view path = std::string_view(result_).substr(0, question);
    std::string_view own = question == std::string::npos
                               ? std::string_view()
                               : std::string_view(result_).substr(question + 1);
    // Built aside: request.query may view rewritten_query (a second rewrite).
    query_after_rewrite(own, question != std::string::npos, request.query, query_);
    router::NormalizedPath normalized =
        normalize_rule_path(path, scratch_, request.normalized_path);
    if (normalized.error != router::PathError::none) [[unlikely]] {
        // A "to" without a leading '/' is the config's fault (500); a
        // climb above "/" ("/..") the client's.
        int status = normalized.error == router::PathError::not_origin_form ? 500 : 400;
        client.respond_text(status, http::status_text(status));
        return http::StepResult::answered;
    }
    request.path_had_encoded_slash = normalized.had_encoded_slash;
    std::swap(request.rewritten_query, query_);
    request.query = request.rewritten_query;
    request.uri_changed = true;
    return rule.flag == RewriteFlag::last ? http::StepResult::reroute : http::StepResult::next;
}

// The result as Location, relative or absolute, with the request's query
// appended as for an internal rewrite.
void RewriteStep::redirect(int status, http::Request& request, http::Exchange& client) {
    size_t question = result_.find('?');
    bool drop_query = result_.ends_with('?');
    if (drop_query) result_.pop_back();
    if (!drop_query && !request.query.empty()) {
        result_ += question == std::string::npos ? '?' : '&';
        result_.append(request.query);
    }
    http::answer_redirect(client, status, result_, http::status_text(status));
}

}  // namespace portico::rules
