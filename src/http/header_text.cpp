#include "http/header_text.hpp"

#include <cstdint>
#include <cstring>

namespace portico::http {

bool equals_ignore_case_same_size(const char* a, const char* b, size_t size) {
    for (size_t i = 0; i < size; ++i) {
        unsigned char x = static_cast<unsigned char>(a[i]);
        unsigned char y = static_cast<unsigned char>(b[i]);
        if (x == y) continue;
        if ((x | 0x20) != (y | 0x20) || (x | 0x20) < 'a' || (x | 0x20) > 'z') return false;
    }
    return true;
}

namespace {

// Eight bytes lowered at once: a byte's top bit says "in A..Z" (x + 0x3f
// reaches 0x80 from 'A' on, x + 0x25 from '[' on; bytes over 0x7f are
// left out), and shifted to 0x20 it lowers the letter. No carry crosses a
// byte: each sum stays below 0x100.
void copy_lower_case_8(char* to, const char* from) {
    constexpr uint64_t ones = 0x0101010101010101;
    uint64_t bytes;
    std::memcpy(&bytes, from, 8);
    uint64_t low7 = bytes & (0x7f * ones);
    uint64_t upper = (low7 + 0x3f * ones) & ~(low7 + 0x25 * ones) & ~bytes & (0x80 * ones);
    bytes |= upper >> 2;
    std::memcpy(to, &bytes, 8);
}

}  // namespace

void copy_lower_case(char* to, std::string_view from) {
    size_t size = from.size();
    if (size < 8) {
        for (size_t i = 0; i < size; ++i) {
            char c = from[i];
            to[i] = static_cast<char>(c + (static_cast<unsigned char>(c - 'A') < 26 ? 0x20 : 0));
        }
        return;
    }
    for (size_t i = 0; i + 8 < size; i += 8) copy_lower_case_8(to + i, from.data() + i);
    // The last eight bytes, overlapping what is done already (lowering twice is lowering once).
    copy_lower_case_8(to + size - 8, from.data() + size - 8);
}

std::string_view trim_ows(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
    return text;
}

}  // namespace portico::http
