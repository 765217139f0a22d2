#include "http/range.hpp"

#include <charconv>

#include "http/header_text.hpp"

namespace portico::http {

namespace {

// Digits only (no sign, no spaces); false on overflow or anything else.
bool parse_number(std::string_view text, uint64_t& value) {
    if (text.empty()) return false;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    return error == std::errc() && end == text.data() + text.size();
}

}  // namespace

ByteRange parse_byte_range(std::string_view header, uint64_t size) {
    ByteRange whole;
    header = http::trim_ows(header);
    constexpr std::string_view unit = "bytes=";
    // Another unit, or no unit: ignore the header (RFC 9110 14.2).
    // Range units are case-insensitive (RFC 9110 14.1).
    if (header.size() <= unit.size() ||
        !http::equals_ignore_case(header.substr(0, unit.size()), unit))
        return whole;
    std::string_view spec = http::trim_ows(header.substr(unit.size()));
    if (spec.find(',') != std::string_view::npos) return whole;  // several ranges
    size_t dash = spec.find('-');
    if (dash == std::string_view::npos) return whole;
    std::string_view first_text = http::trim_ows(spec.substr(0, dash));
    std::string_view last_text = http::trim_ows(spec.substr(dash + 1));

    ByteRange range;
    range.kind = ByteRange::Kind::partial;
    if (first_text.empty()) {
        // "-N": the last N bytes.
        uint64_t suffix;
        if (!parse_number(last_text, suffix)) return whole;
        if (suffix == 0 || size == 0) return {ByteRange::Kind::unsatisfiable, 0, 0};
        range.first = suffix >= size ? 0 : size - suffix;
        range.last = size - 1;
        return range;
    }
    uint64_t first;
    if (!parse_number(first_text, first)) return whole;
    uint64_t last = UINT64_MAX;
    if (!last_text.empty() && !parse_number(last_text, last)) return whole;
    if (last < first) return whole;  // invalid: the header is ignored
    if (first >= size) return {ByteRange::Kind::unsatisfiable, 0, 0};
    range.first = first;
    range.last = last >= size ? size - 1 : last;
    return range;
}

}  // namespace portico::http
