// Request-target path normalization, done once per request before the
// location is chosen (nginx's rules): percent-decode once, merge slashes,
// remove dot segments, refuse anything that would climb above "/".
#pragma once

#include <string>
#include <string_view>

namespace portico::router {

enum class PathError {
    none,
    not_origin_form,     // does not start with '/'
    bad_percent_escape,  // '%' not followed by two hex digits
    nul_byte,            // a decoded %00 (or a raw NUL)
    climbs_above_root,   // "/../x", "/a/../../x", "/%2e%2e/x"
};

struct NormalizedPath {
    PathError error = PathError::none;
    // True when a %2F was decoded into a '/': the static handler refuses
    // such paths (they change the meaning of the path), the proxy ignores it.
    bool had_encoded_slash = false;
};

// `raw` is the path part of the request target (no query, no fragment).
// On success `out` holds the normalized path; it always starts with '/', and
// a trailing slash (also one left by a final "." or "..") is kept, because it
// tells a directory request apart. `out` is reused to avoid an allocation per
// request.
NormalizedPath normalize_path(std::string_view raw, std::string& out);

}  // namespace portico::router
