// Accept-Encoding (RFC 9110 12.5.3): of the codings the server can send,
// the one the client wants most. One function for the on-the-fly filter and
// the precompressed sidecars alike, so both answer a client the same way.
#pragma once

#include <optional>
#include <string_view>

#include "config/coding.hpp"
#include "http/request.hpp"

namespace portico::http {

// The coding of `offered` with the highest q-value the client gives it (its
// own entry, else "*"'s; "x-gzip" is gzip), ties going to the server's
// preference br > zstd > gzip. nullopt: send the representation as it is,
// because no coding offered is acceptable (no header, not listed, q=0) or
// the client ranks identity above the best of them. A member with a
// malformed q-value counts as not listed.
std::optional<config::Coding> negotiate_coding(std::string_view accept_encoding,
                                               config::CodingSet offered);

// How on-the-fly compression sees a request: `compressible` false for one
// never compressed, whatever the response (HEAD: no body; a Range request:
// its offsets count the identity's bytes; an upgrade: a tunnel), else its
// Accept-Encoding, for negotiate_coding among all codings. One pass over
// the headers: it runs on every request of a compressing location (its
// filter, and the cache's coded variants, cache/variant_stream.hpp).
struct CompressibleRequest {
    bool compressible = false;
    std::string_view accept_encoding;
};
CompressibleRequest compressible_request(const Request& request);

}  // namespace portico::http
