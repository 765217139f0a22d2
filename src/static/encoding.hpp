// Accept-Encoding (RFC 9110 12.5.3), for gzip_static.
#pragma once

#include <string_view>

namespace portico::staticfiles {

// True when the client accepts gzip: "gzip" (or "x-gzip", or "*" without an
// explicit gzip entry) listed with a q-value above 0.
bool accepts_gzip(std::string_view accept_encoding);

}  // namespace portico::staticfiles
