// Which responses are compressed, and what their heads become (RFC 9110
// 8.4, 8.8.1, 12.5.5; the rules of nginx's gzip filter): small pure
// functions the filter applies and the unit tests pin down.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "config/config.hpp"

namespace portico::compress {

// What the filter knows of a response when its body starts.
struct ResponseFacts {
    int status = 200;
    std::optional<uint64_t> length;  // nullopt: streamed, length unknown
    std::string_view content_type;
    std::string_view content_encoding;
    std::string_view cache_control;
};

enum class Treatment {
    as_is,      // not for compressing: left exactly as it is
    vary_only,  // compressible, but this client accepts no coding we have:
                // Vary: Accept-Encoding, so a shared cache keeps the two apart
    compress,
};

Treatment treatment_for(const ResponseFacts& response, const config::CompressConfig& config,
                        bool client_accepts_a_coding);

// The media type of `content_type` (parameters ignored) is one of `types`
// ("type/subtype", or "type/*"; lowercase).
bool type_listed(std::string_view content_type, const std::vector<std::string>& types);

// Cache-Control carries the no-transform directive (RFC 9111 5.2.2.6).
bool forbids_transform(std::string_view cache_control);

// A Vary value that already covers Accept-Encoding: the name, or "*".
bool vary_covers_accept_encoding(std::string_view vary);

}  // namespace portico::compress
