// A step a request takes between its head and its content (nginx's phases:
// server rewrite, rewrite, access; Pingora's request_filter). The worker
// composes them from the config (worker/composition.cpp); the codecs never
// name one: both walk the same list (http/request_routing.hpp).
#pragma once

#include "http/exchange.hpp"
#include "http/request.hpp"

namespace portico::http {

enum class StepResult {
    next,      // go on with the next step, then the content
    answered,  // the step answered on `client` (a redirect, a refusal): nothing after it runs
    reroute,   // request.normalized_path changed: choose the location again (rewrite ... last,
               // an internal redirect), at most max_reroutes times
};

// More internal redirects than this for one request end it with 500 (nginx: 10).
inline constexpr int max_reroutes = 10;

class RequestStep {
public:
    virtual ~RequestStep() = default;
    // `request` may be changed for the steps and handlers after it.
    virtual StepResult answer(Request& request, Exchange& client) = 0;
};

}  // namespace portico::http
