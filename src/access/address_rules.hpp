// allow = [...], deny = [...] of a location: nginx's allow/deny, judged on
// the real client address (after trusted_proxies and the PROXY header).
//
// The two lists have no order between them, so an address is judged by the
// most specific entry that contains it (the longest prefix; "all" is the
// shortest); none: it passes. For the lists nginx users write (allow A,
// allow B, deny all; deny A, allow B/8, deny all) this is nginx's
// first-match verdict. An IPv4-mapped IPv6 client (::ffff:10.0.0.1, on a
// dual-stack listener) is judged by the IPv4 entries, as nginx does.
//
// The entries are sorted by prefix length at composition, per family, with
// their masks ready: the first that matches decides, a few instructions
// each.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "core/log_throttle.hpp"
#include "http/admission.hpp"
#include "metrics/worker_counters.hpp"

namespace portico::access {

// The verdicts of one location's entries, apart from the check for its tests.
class AddressRules {
public:
    explicit AddressRules(const std::vector<config::AccessRule>& rules);
    // The entry that decides for `address`, or nullptr when none contains
    // it. Inline for an IPv4 client: the address, then one test per entry.
    const config::AccessRule* judge(const sockaddr& address) const {
        if (address.sa_family == AF_INET) [[likely]]
            return judge_v4(ntohl(reinterpret_cast<const sockaddr_in&>(address).sin_addr.s_addr));
        return judge_other(address);
    }

private:
    struct V4Entry {
        uint32_t network;  // host byte order, masked
        uint32_t mask;
        const config::AccessRule* rule;
    };
    struct V6Entry {
        uint64_t network[2];  // high and low halves, host byte order, masked
        uint64_t mask[2];
        const config::AccessRule* rule;
    };
    const config::AccessRule* judge_v4(uint32_t address) const {
        for (const V4Entry& entry : v4_)
            if ((address & entry.mask) == entry.network) return entry.rule;
        return nullptr;
    }
    const config::AccessRule* judge_other(const sockaddr& address) const;

    std::vector<V4Entry> v4_;  // longest prefix first
    std::vector<V6Entry> v6_;
};

class AddressRulesCheck {
public:
    using Verdict = http::AdmissionVerdict;

    // `location_index`: the location's index in Config::locations, for its counters.
    AddressRulesCheck(const config::LocationConfig& location, size_t location_index,
                      metrics::WorkerCounters& counters);
    // Inline: one test per entry, in the gate's function.
    Verdict check(http::Exchange& exchange, http::Admission& admission) {
        const config::AccessRule* rule = rules_.judge(admission.client().any);
        if (rule == nullptr || rule->allow) [[likely]]
            return Verdict::pass;
        return refuse(exchange, *rule);
    }

private:
    Verdict refuse(http::Exchange& exchange, const config::AccessRule& rule);

    const config::LocationConfig& location_;
    size_t location_index_;
    metrics::WorkerCounters& counters_;
    AddressRules rules_;
    core::LogThrottle refusal_log_;
};

}  // namespace portico::access
