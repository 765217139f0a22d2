// error_pages = { 404 = "/404.html", 502 = "/maintenance.html" }: a
// response with a listed status, whether portico made it (a static 404, the
// proxy's 502/504, respond) or the upstream sent it (an app's 503), is
// replaced by the answer for the page's URI, chosen through the locations
// again as a GET, with the original status (nginx `error_page CODE URI`,
// with proxy_intercept_errors for the upstream's).
//
// A response filter, so a location without error_pages pays nothing: at a
// listed head it takes the client's exchange over (the handler is told its
// client is gone: a proxy stops reading, what it still sends is dropped)
// and answers the page there, through ErrorPages. The page's own response
// goes through a filter that puts the original status on a 2xx head;
// anything else (the page is missing too, it loops, a step redirects it)
// turns into the original error as portico would send it, and an error
// page never gets an error page of its own: never a loop.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "config/config.hpp"
#include "http/request_step.hpp"
#include "http/response_filter.hpp"
#include "http/server_context.hpp"

namespace portico::rules {

// The worker's error page machinery, shared by every location's filter.
class ErrorPages {
public:
    explicit ErrorPages(http::ServerContext& server);
    ~ErrorPages();
    ErrorPages(const ErrorPages&) = delete;
    ErrorPages& operator=(const ErrorPages&) = delete;

    // Answers `uri` on `client` (whose response has not begun) for a
    // response of `status`.
    void serve(const config::Template& uri, int status, http::Exchange& client);
    // An error page's response is being chosen: it gets no error page.
    bool serving() const { return serving_; }

private:
    class StatusKeepingFilter;

    http::ServerContext& server_;
    std::unique_ptr<StatusKeepingFilter> status_filter_;
    bool serving_ = false;
    std::string uri_;  // the page's URI, expanded; reused
    std::string scratch_;
};

// One location's error_pages.
class ErrorPageFilter final : public http::ResponseFilter {
public:
    ErrorPageFilter(const std::vector<std::pair<int, config::Template>>& pages, ErrorPages& shared)
        : pages_(pages), shared_(shared) {}

protected:
    std::unique_ptr<http::FilterStream> new_stream() override;

private:
    const std::vector<std::pair<int, config::Template>>& pages_;
    ErrorPages& shared_;
};

// The steps of a location with error_pages, run through its filter: a
// step's answer (a deny's 403, a limit's 429, a rewrite's 500) gets the
// page too, as in nginx.
class StepsThroughErrorPages final : public http::RequestStep {
public:
    StepsThroughErrorPages(std::vector<http::RequestStep*> steps, ErrorPageFilter& filter)
        : steps_(std::move(steps)), filter_(filter) {}
    http::StepResult answer(http::Request& request, http::Exchange& client) override;

private:
    std::vector<http::RequestStep*> steps_;
    ErrorPageFilter& filter_;
};

}  // namespace portico::rules
