// A normalized (decoded) path written back as a URI path: a directory
// redirect's Location, the target sent upstream after a rewrite.
#pragma once

#include <string>
#include <string_view>

namespace portico::http {

// Percent-encodes what may not stand in a path as it is (RFC 3986 3.3),
// and the backslash, which browsers treat as a slash.
void append_encoded_path(std::string& out, std::string_view path);

}  // namespace portico::http
