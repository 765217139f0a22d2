// What the fuzz targets share: a check that stays on in every build (a
// broken invariant is a finding: abort, so libFuzzer saves the input), and
// the split sizes a target feeds its input in (as a socket delivers it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(condition)                                                             \
    do {                                                                                  \
        if (!(condition)) {                                                               \
            std::fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__,     \
                         #condition);                                                     \
            std::abort();                                                                 \
        }                                                                                 \
    } while (0)

namespace portico::fuzz {

// The input's first byte picks how the rest is cut into reads: 1 byte at a
// time, a fixed small size, or the whole at once, so the parsers' handling
// of a head or a chunk split anywhere is exercised.
struct Splits {
    size_t size;
    Splits(const uint8_t*& data, size_t& length) {
        uint8_t choice = length > 0 ? data[0] : 0;
        if (length > 0) {
            ++data;
            --length;
        }
        size = choice == 0 ? SIZE_MAX : choice < 16 ? choice : choice % 64 + 1;
    }
};

}  // namespace portico::fuzz
