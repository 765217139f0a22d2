#include "config/address_range.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <charconv>
#include <cstring>

namespace portico::config {

namespace {

// The bits of `bytes` past `prefix_length` are all zero.
bool host_bits_clear(const uint8_t* bytes, size_t size, unsigned prefix_length) {
    for (size_t i = 0; i < size; ++i) {
        unsigned first_bit = static_cast<unsigned>(i) * 8;
        if (first_bit + 8 <= prefix_length) continue;
        unsigned kept = prefix_length > first_bit ? prefix_length - first_bit : 0;
        uint8_t host_mask = static_cast<uint8_t>(0xff >> kept);
        if (bytes[i] & host_mask) return false;
    }
    return true;
}

bool prefix_matches(const uint8_t* a, const uint8_t* b, unsigned prefix_length) {
    size_t whole = prefix_length / 8;
    if (std::memcmp(a, b, whole) != 0) return false;
    unsigned rest = prefix_length % 8;
    if (rest == 0) return true;
    uint8_t mask = static_cast<uint8_t>(0xff << (8 - rest));
    return (a[whole] & mask) == (b[whole] & mask);
}

}  // namespace

std::optional<AddressRange> parse_address_range(std::string_view text, std::string& why) {
    AddressRange range;
    range.text = std::string(text);
    size_t slash = text.find('/');
    std::string ip(text.substr(0, slash));
    if (inet_pton(AF_INET, ip.c_str(), range.bytes) == 1) {
        range.family = AF_INET;
    } else if (inet_pton(AF_INET6, ip.c_str(), range.bytes) == 1) {
        range.family = AF_INET6;
    } else {
        why = "'" + ip + "' is not an IP address (expected \"10.0.0.0/8\", \"fd00::/8\" or an IP)";
        return std::nullopt;
    }
    unsigned width = range.family == AF_INET ? 32 : 128;
    unsigned bits = width;
    if (slash != std::string_view::npos) {
        std::string_view digits = text.substr(slash + 1);
        auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), bits);
        if (digits.empty() || error != std::errc() || end != digits.data() + digits.size() ||
            bits > width) {
            why = "prefix length '" + std::string(digits) + "' is not a number 0.." +
                  std::to_string(width);
            return std::nullopt;
        }
    }
    range.prefix_length = static_cast<uint8_t>(bits);
    if (!host_bits_clear(range.bytes, width / 8, bits)) {
        why = "bits are set past the /" + std::to_string(bits) +
              " prefix (a range starts at its first address; or did you mean /" +
              std::to_string(width) + "?)";
        return std::nullopt;
    }
    return range;
}

bool range_contains(const AddressRange& range, const sockaddr& address) {
    if (address.sa_family == AF_INET) {
        if (range.family != AF_INET) return false;
        const auto& v4 = reinterpret_cast<const sockaddr_in&>(address);
        return prefix_matches(range.bytes, reinterpret_cast<const uint8_t*>(&v4.sin_addr),
                              range.prefix_length);
    }
    if (address.sa_family != AF_INET6) return false;
    const auto* bytes = reinterpret_cast<const sockaddr_in6&>(address).sin6_addr.s6_addr;
    if (range.family == AF_INET6) return prefix_matches(range.bytes, bytes, range.prefix_length);
    static constexpr uint8_t v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return std::memcmp(bytes, v4_mapped, sizeof v4_mapped) == 0 &&
           prefix_matches(range.bytes, bytes + 12, range.prefix_length);
}

bool any_range_contains(std::span<const AddressRange> ranges, const sockaddr& address) {
    for (const AddressRange& range : ranges)
        if (range_contains(range, address)) return true;
    return false;
}

}  // namespace portico::config
