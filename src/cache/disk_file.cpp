#include "cache/disk_file.hpp"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cstring>
#include <type_traits>

namespace portico::cache {

static_assert(std::is_trivially_copyable_v<DiskHeader>);

namespace {

constexpr char disk_magic[8] = {'p', 'o', 'r', 't', 'i', 'c', 'o', 'C'};
constexpr uint32_t disk_layout = 1;
constexpr char disk_hex_digits[] = "0123456789abcdef";

std::string hex_of(KeyHash key) {
    std::string text(32, '0');
    for (int i = 0; i < 16; ++i) {
        text[static_cast<size_t>(15 - i)] = disk_hex_digits[(key.high >> (4 * i)) & 0xf];
        text[static_cast<size_t>(31 - i)] = disk_hex_digits[(key.low >> (4 * i)) & 0xf];
    }
    return text;
}

int disk_hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

}  // namespace

std::string disk_name(KeyHash key) {
    return hex_of(key);
}

std::string disk_folder(KeyHash key) {
    std::string name = hex_of(key);
    return name.substr(30, 2) + "/" + name.substr(28, 2);
}

std::optional<KeyHash> key_of_name(std::string_view name) {
    if (name.size() != 32) return std::nullopt;
    KeyHash key;
    for (size_t i = 0; i < 32; ++i) {
        int digit = disk_hex_value(name[i]);
        if (digit < 0) return std::nullopt;
        uint64_t& half = i < 16 ? key.high : key.low;
        half = half << 4 | static_cast<uint64_t>(digit);
    }
    return key;
}

std::string encode_disk_object(KeyHash key, KeyHash base, const ObjectFacts& facts,
                               std::span<const std::string_view> parts) {
    DiskHeader header{};
    std::memcpy(header.magic, disk_magic, sizeof disk_magic);
    header.layout = disk_layout;
    header.header_bytes = sizeof(DiskHeader);
    header.key = key;
    header.base = base;
    header.facts = facts;
    XXH3_state_t state;
    XXH3_64bits_reset(&state);
    size_t total = sizeof header;
    for (std::string_view part : parts) {
        XXH3_64bits_update(&state, part.data(), part.size());
        total += part.size();
    }
    header.checksum = XXH3_64bits_digest(&state);
    std::string bytes;
    bytes.reserve(total);
    bytes.append(reinterpret_cast<const char*>(&header), sizeof header);
    for (std::string_view part : parts) bytes += part;
    return bytes;
}

std::optional<DiskHeader> check_disk_header(std::string_view head, uint64_t file_bytes,
                                            KeyHash key) {
    if (head.size() < sizeof(DiskHeader)) return std::nullopt;
    DiskHeader header;
    std::memcpy(&header, head.data(), sizeof header);
    if (std::memcmp(header.magic, disk_magic, sizeof disk_magic) != 0 ||
        header.layout != disk_layout || header.header_bytes != sizeof(DiskHeader) ||
        !(header.key == key))
        return std::nullopt;
    const ObjectFacts& facts = header.facts;
    if (file_bytes !=
        sizeof header + uint64_t{facts.key_bytes} + facts.head_bytes + facts.body_bytes)
        return std::nullopt;
    return header;
}

std::optional<DiskHeader> check_disk_object(std::string_view bytes, KeyHash key) {
    std::optional<DiskHeader> header = check_disk_header(bytes, bytes.size(), key);
    if (!header) return std::nullopt;
    std::string_view payload = bytes.substr(sizeof(DiskHeader));
    if (XXH3_64bits(payload.data(), payload.size()) != header->checksum) return std::nullopt;
    return header;
}

}  // namespace portico::cache
