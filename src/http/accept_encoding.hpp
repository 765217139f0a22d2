// Accept-Encoding (RFC 9110 12.5.3): of the codings the server can send,
// the one the client wants most. One function for the on-the-fly filter and
// the precompressed sidecars alike, so both answer a client the same way.
#pragma once

#include <optional>
#include <string_view>

#include "config/coding.hpp"

namespace portico::http {

// The coding of `offered` with the highest q-value the client gives it (its
// own entry, else "*"'s; "x-gzip" is gzip), ties going to the server's
// preference br > zstd > gzip. nullopt: send the representation as it is,
// because no coding offered is acceptable (no header, not listed, q=0) or
// the client ranks identity above the best of them. A member with a
// malformed q-value counts as not listed.
std::optional<config::Coding> negotiate_coding(std::string_view accept_encoding,
                                               config::CodingSet offered);

}  // namespace portico::http
