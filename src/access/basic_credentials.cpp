#include "access/basic_credentials.hpp"

#include <strings.h>

#include <array>
#include <cstdint>

namespace portico::access {

namespace {

constexpr uint8_t not_base64 = 0xff;

constexpr std::array<uint8_t, 256> base64_values() {
    std::array<uint8_t, 256> values{};
    values.fill(not_base64);
    constexpr std::string_view alphabet =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < alphabet.size(); ++i)
        values[static_cast<uint8_t>(alphabet[i])] = static_cast<uint8_t>(i);
    return values;
}

constexpr std::array<uint8_t, 256> base64_value = base64_values();

// RFC 4648 base64, its padding optional (some clients leave it out); any
// other character, or a length no encoding has, is not base64.
bool decode_base64(std::string_view text, std::string& out) {
    if (text.size() % 4 == 0) {
        if (text.ends_with("=="))
            text.remove_suffix(2);
        else if (text.ends_with('='))
            text.remove_suffix(1);
    }
    if (text.size() % 4 == 1) return false;
    out.clear();
    uint32_t bits = 0;
    int count = 0;
    for (char c : text) {
        uint8_t value = base64_value[static_cast<uint8_t>(c)];
        if (value == not_base64) return false;
        bits = bits << 6 | value;
        count += 6;
        if (count >= 8) {
            count -= 8;
            out += static_cast<char>(bits >> count & 0xff);
        }
    }
    return true;
}

}  // namespace

bool parse_basic_credentials(std::string_view header, std::string& decoded, BasicCredentials& out) {
    // The scheme is case-insensitive (RFC 9110 11.1), then one or more spaces.
    constexpr std::string_view scheme = "basic";
    if (header.size() <= scheme.size() ||
        ::strncasecmp(header.data(), scheme.data(), scheme.size()) != 0 ||
        header[scheme.size()] != ' ')
        return false;
    header.remove_prefix(scheme.size());
    while (header.starts_with(' ')) header.remove_prefix(1);
    while (header.ends_with(' ') || header.ends_with('\t')) header.remove_suffix(1);
    if (header.empty() || header.size() > (max_credentials_size + 2) / 3 * 4) return false;
    if (!decode_base64(header, decoded) || decoded.size() > max_credentials_size) return false;
    size_t colon = decoded.find(':');
    if (colon == std::string::npos) return false;
    std::string_view text = decoded;
    out.user = text.substr(0, colon);
    out.password = text.substr(colon + 1);
    return true;
}

}  // namespace portico::access
