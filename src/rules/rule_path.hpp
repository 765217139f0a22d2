// A path a rule made (a rewrite's result, an error page's URI) taken as the
// request's normalized path: the rules' meeting of the percent-encoding
// (http/path_encoding.hpp) and the router's normalization (router/path.hpp).
#pragma once

#include <string>
#include <string_view>

#include "router/path.hpp"

namespace portico::rules {

// `path` as the request's normalized path, in `out`: dot segments resolved,
// nothing decoded again (its captures come from the decoded path: "%2e%2e"
// in one stays that text, as in nginx). `scratch` is reused.
router::NormalizedPath normalize_rule_path(std::string_view path, std::string& scratch,
                                           std::string& out);

}  // namespace portico::rules
