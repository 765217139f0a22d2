// The content codings portico sends (RFC 9110 8.4.1): the words the config
// (`compress`, `precompressed`), the Accept-Encoding negotiation and the
// encoders share.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace portico::config {

// In the server's order of preference, for a client that accepts several
// equally: brotli compresses text best, zstd nearly as well and faster,
// gzip is what every client has.
enum class Coding : uint8_t { br, zstd, gzip };
inline constexpr std::array<Coding, 3> codings_by_preference{Coding::br, Coding::zstd,
                                                             Coding::gzip};

// The Content-Encoding token.
constexpr std::string_view coding_name(Coding coding) {
    switch (coding) {
    case Coding::br: return "br";
    case Coding::zstd: return "zstd";
    case Coding::gzip: return "gzip";
    }
    return {};
}

// The precompressed sidecar's suffix: FILE.br, FILE.zst, FILE.gz (what
// `brotli`, `zstd` and `gzip` name their output).
constexpr std::string_view sidecar_suffix(Coding coding) {
    switch (coding) {
    case Coding::br: return ".br";
    case Coding::zstd: return ".zst";
    case Coding::gzip: return ".gz";
    }
    return {};
}

class CodingSet {
public:
    constexpr CodingSet() = default;
    static constexpr CodingSet all() {
        CodingSet set;
        for (Coding coding : codings_by_preference) set.add(coding);
        return set;
    }
    constexpr void add(Coding coding) { bits_ |= bit(coding); }
    constexpr void remove(Coding coding) { bits_ &= static_cast<uint8_t>(~bit(coding)); }
    constexpr bool contains(Coding coding) const { return (bits_ & bit(coding)) != 0; }
    constexpr bool empty() const { return bits_ == 0; }
    constexpr bool operator==(const CodingSet&) const = default;

private:
    static constexpr uint8_t bit(Coding coding) {
        return static_cast<uint8_t>(1u << static_cast<unsigned>(coding));
    }
    uint8_t bits_ = 0;
};

}  // namespace portico::config
