// `portico convert`: an nginx config in, a portico config out, and every
// directive that could not be translated exactly, said rather than
// approximated (docs/convert.md).
#pragma once

#include <string>
#include <vector>

#include "convert/nginx_parser.hpp"

namespace portico::convert {

struct Converted {
    std::string toml;               // empty when nothing could be written
    std::vector<Refusal> refusals;  // FILE:LINE: directive: why
    std::string error;              // why nothing was written
};

// The portico config for a parsed nginx config; relative paths are
// resolved against `prefix` and written absolute.
Converted convert_nginx(const ParsedConfig& parsed, const std::string& prefix);

}  // namespace portico::convert
