#include "access/address_rules.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <uv.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include "core/log.hpp"
#include "http/peer_address.hpp"
#include "http/status.hpp"

namespace portico::access {

namespace {

// The refusal's name in the access log (Request::refused_by).
constexpr std::string_view refused_name = "deny";

uint32_t load_v4(const uint8_t* bytes) {
    return uint32_t{bytes[0]} << 24 | uint32_t{bytes[1]} << 16 | uint32_t{bytes[2]} << 8 |
           uint32_t{bytes[3]};
}

uint64_t load_u64(const uint8_t* bytes) {
    uint64_t value = 0;
    for (int i = 0; i < 8; ++i) value = value << 8 | bytes[i];
    return value;
}

// A mask of the top `bits` bits of a word (0 to 64).
uint64_t top_bits(unsigned bits) {
    return bits == 0 ? 0 : ~uint64_t{0} << (64 - bits);
}

}  // namespace

AddressRules::AddressRules(const std::vector<config::AccessRule>& rules) {
    for (const config::AccessRule& rule : rules) {
        const config::AddressRange& range = rule.range;
        unsigned bits = rule.all ? 0 : range.prefix_length;
        if (rule.all || range.family == AF_INET) {
            auto mask = static_cast<uint32_t>(top_bits(bits) >> 32);
            v4_.push_back({rule.all ? 0 : load_v4(range.bytes) & mask, mask, &rule});
        }
        if (rule.all || range.family == AF_INET6) {
            uint64_t high_mask = top_bits(std::min(bits, 64u));
            uint64_t low_mask = top_bits(bits > 64 ? bits - 64 : 0);
            uint64_t high = rule.all ? 0 : load_u64(range.bytes) & high_mask;
            uint64_t low = rule.all ? 0 : load_u64(range.bytes + 8) & low_mask;
            v6_.push_back({{high, low}, {high_mask, low_mask}, &rule});
        }
    }
    // Longest prefix first, so the first entry that matches is the most
    // specific (the config refuses two entries of the same prefix).
    std::stable_sort(v4_.begin(), v4_.end(),
                     [](const V4Entry& a, const V4Entry& b) { return a.mask > b.mask; });
    auto length = [](const V6Entry& entry) {
        return std::popcount(entry.mask[0]) + std::popcount(entry.mask[1]);
    };
    std::stable_sort(v6_.begin(), v6_.end(),
                     [&](const V6Entry& a, const V6Entry& b) { return length(a) > length(b); });
}

const config::AccessRule* AddressRules::judge_other(const sockaddr& address) const {
    if (address.sa_family != AF_INET6) return nullptr;
    const uint8_t* bytes = reinterpret_cast<const sockaddr_in6&>(address).sin6_addr.s6_addr;
    static constexpr uint8_t v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (std::memcmp(bytes, v4_mapped, sizeof v4_mapped) == 0) return judge_v4(load_v4(bytes + 12));
    uint64_t high = load_u64(bytes);
    uint64_t low = load_u64(bytes + 8);
    for (const V6Entry& entry : v6_)
        if ((high & entry.mask[0]) == entry.network[0] && (low & entry.mask[1]) == entry.network[1])
            return entry.rule;
    return nullptr;
}

AddressRulesCheck::AddressRulesCheck(const config::LocationConfig& location, size_t location_index,
                                     metrics::WorkerCounters& counters)
    : location_(location),
      location_index_(location_index),
      counters_(counters),
      rules_(location.access) {}

AddressRulesCheck::Verdict AddressRulesCheck::refuse(http::Exchange& exchange,
                                                     const config::AccessRule& rule) {
    const http::PeerAddress& client = exchange.client_address();
    exchange.request().refused_by = refused_name;
    counters_.count_access_denied(location_index_, metrics::AccessDenial::address);
    uint64_t left_out = 0;
    if (refusal_log_.allow(uv_hrtime() / 1'000'000, left_out)) {
        char ip[INET6_ADDRSTRLEN];
        log::warn(
            "deny \"{}\" of location '{}' refused client {} with 403 ({} more refusals of this "
            "location since the last line; logged at most once a second)",
            rule.range.text, location_.name, http::format_ip(client, ip, sizeof ip), left_out);
    }
    exchange.respond_text(403, http::status_text(403));
    return Verdict::answered;
}

}  // namespace portico::access
