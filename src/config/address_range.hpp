// Address ranges ("10.0.0.0/8", "fd00::/8", a bare "127.0.0.1" or "::1"):
// read from the config (trusted_proxies; the allow/deny lists of access
// control) and matched against a peer's sockaddr on the request path.
#pragma once

#include <sys/socket.h>

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "config/config.hpp"

namespace portico::config {

// "IP/BITS" or a bare IP (all its bits: /32, /128). nullopt with `why` set
// on anything else: a host name, bits past the family's width, or bits set
// below the prefix ("10.0.0.1/8": nginx masks them with a warning; here it
// is refused, since it is most often a typo of /32 or of "10.0.0.0/8").
std::optional<AddressRange> parse_address_range(std::string_view text, std::string& why);

// Whether `address` (AF_INET or AF_INET6) lies in `range`. An IPv4-mapped
// IPv6 address (::ffff:10.0.0.1, an IPv4 client of a dual-stack listener)
// matches IPv4 ranges as its IPv4 address, as nginx's ngx_cidr_match does.
bool range_contains(const AddressRange& range, const sockaddr& address);
bool any_range_contains(std::span<const AddressRange> ranges, const sockaddr& address);

}  // namespace portico::config
