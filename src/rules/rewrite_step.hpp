// rewrite = [{ from, to, flag }]: the location's rules tried in order
// against the normalized path ($uri); the first that matches applies (nginx
// `rewrite REGEX REPLACEMENT FLAG`). last: the location is chosen again
// with the new URI; break: this location serves it; redirect / permanent:
// 302 / 301 to it. A result starting with http:// or https:// is always
// a redirect (nginx). The query is kept as nginx keeps it (query_after_rewrite).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "http/request_step.hpp"
#include "rules/regex_captures.hpp"

namespace portico::rules {

// The query after a rewrite whose result has `own` as its arguments
// (`has_question`: the result has a '?'): the request's `original` query
// appended after them ("a=1&orig"), or alone; none when the result ends in
// '?' (nginx drops it then).
void query_after_rewrite(std::string_view own, bool has_question, std::string_view original,
                         std::string& out);

class RewriteStep final : public http::RequestStep {
public:
    explicit RewriteStep(const std::vector<config::RewriteRule>& rules);
    http::StepResult answer(http::Request& request, http::Exchange& client) override;

private:
    struct Rule {
        const config::RewriteRule& config;
        RegexCaptures from;
    };

    http::StepResult apply(const config::RewriteRule& rule, http::Request& request,
                           http::Exchange& client);
    void redirect(int status, http::Request& request, http::Exchange& client);

    std::vector<Rule> rules_;
    std::string result_;  // the expanded `to`, reused from request to request
    std::string query_;
    std::string scratch_;
};

}  // namespace portico::rules
