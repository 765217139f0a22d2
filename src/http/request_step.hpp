// A step a request takes between its head and its content (nginx's phases:
// server rewrite, rewrite, access; Pingora's request_filter). The worker
// composes them from the config (worker/composition.cpp); the codecs never
// name one: both walk the same list (http/request_routing.hpp).
#pragma once

#include "http/exchange.hpp"
#include "http/request.hpp"

namespace portico::http {

class RequestStep {
public:
    virtual ~RequestStep() = default;
    // True when the step answered the request itself on `client` (a
    // redirect, a refusal): nothing after it runs. `request` may be
    // changed for the steps and handlers after it.
    virtual bool answer(Request& request, Exchange& client) = 0;
};

}  // namespace portico::http
