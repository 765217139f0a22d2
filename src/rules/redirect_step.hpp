// redirect = { to, status }: every request of the location is answered
// with a redirect (nginx `return 301 URL`).
#pragma once

#include <optional>
#include <string>

#include "config/config.hpp"
#include "http/request_step.hpp"
#include "rules/regex_captures.hpp"

namespace portico::rules {

class RedirectStep final : public http::RequestStep {
public:
    RedirectStep(const config::RedirectConfig& redirect, const config::LocationConfig& location);
    http::StepResult answer(http::Request& request, http::Exchange& client) override;

private:
    const config::RedirectConfig& redirect_;
    // A regex location's groups, only when `to` reads them ($1).
    std::optional<RegexCaptures> captures_;
    std::string target_;  // reused from request to request
};

}  // namespace portico::rules
