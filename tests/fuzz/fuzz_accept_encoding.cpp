// Accept-Encoding negotiation (compress/accept_encoding): the first byte
// picks the codings offered (its low 3 bits), the rest is the header value.
// Besides never crashing, the choice must be consistent: a coding offered,
// and one that still wins against each other offered coding alone (the
// ranking is a total order, so sidecars tried best-first agree with the
// filter).
#include <optional>
#include <string_view>

#include "http/accept_encoding.hpp"
#include "fuzz_support.hpp"

using namespace portico;
using config::Coding;
using config::CodingSet;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t length) {
    if (length < 1) return 0;
    CodingSet offered;
    for (Coding coding : config::codings_by_preference)
        if (data[0] & (1u << static_cast<unsigned>(coding))) offered.add(coding);
    std::string_view header(reinterpret_cast<const char*>(data + 1), length - 1);

    std::optional<Coding> chosen = http::negotiate_coding(header, offered);
    if (!chosen) {
        // Nothing offered wins: no fewer codings can do better.
        for (Coding coding : config::codings_by_preference) {
            CodingSet fewer = offered;
            fewer.remove(coding);
            FUZZ_CHECK(!http::negotiate_coding(header, fewer));
        }
        return 0;
    }
    FUZZ_CHECK(offered.contains(*chosen));
    CodingSet alone;
    alone.add(*chosen);
    FUZZ_CHECK(http::negotiate_coding(header, alone) == chosen);
    for (Coding other : config::codings_by_preference) {
        if (!offered.contains(other)) continue;
        CodingSet pair = alone;
        pair.add(other);
        FUZZ_CHECK(http::negotiate_coding(header, pair) == chosen);
    }
    // The sidecar search: drop the winner, and the next one is offered too.
    CodingSet rest = offered;
    rest.remove(*chosen);
    if (std::optional<Coding> next = http::negotiate_coding(header, rest))
        FUZZ_CHECK(rest.contains(*next));
    return 0;
}
