// A normalized (decoded) path written back as a URI path: a directory
// redirect's Location, the target sent upstream after a rewrite.
#pragma once

#include <string>
#include <string_view>

#include "router/path.hpp"

namespace portico::http {

// Percent-encodes what may not stand in a path as it is (RFC 3986 3.3),
// and the backslash, which browsers treat as a slash.
void append_encoded_path(std::string& out, std::string_view path);

// A path a rule made (a rewrite's result, an error page's URI) as the
// request's normalized path, in `out`: dot segments resolved, nothing
// decoded again (its captures come from the decoded path: "%2e%2e" in one
// stays that text, as in nginx). `scratch` is reused.
router::NormalizedPath normalize_rule_path(std::string_view path, std::string& scratch,
                                           std::string& out);

}  // namespace portico::http
