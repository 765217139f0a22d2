// A redirect's response, whichever rule sends it (redirect_http, a
// location's redirect, a rewrite's redirect or permanent flag).
#pragma once

#include <string_view>

#include "http/exchange.hpp"

namespace portico::http {

// `status` with `location` as Location and `body` as a short plain-text
// body, for a client that does not follow it.
void answer_redirect(Exchange& client, int status, std::string_view location,
                     std::string_view body);

}  // namespace portico::http
