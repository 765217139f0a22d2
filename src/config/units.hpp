// Durations ("250ms", "10s", "5m", "1h") and sizes (1024, "16KiB", "10MiB").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "config/config.hpp"

namespace portico::config {

// nullopt on anything that is not a non-negative integer followed by one of
// ms, s, m, h (no spaces, no fractions), or on overflow.
std::optional<Duration> parse_duration(std::string_view text);

// Accepts a plain integer of bytes, or an integer followed by B, KiB, MiB,
// GiB (also k/K, m/M, g/G, KB, MB, GB as 1024-based, as nginx reads "16k").
// nullopt on anything else or on overflow.
std::optional<uint64_t> parse_size(std::string_view text);

// What a host name (rather than an IP literal) in an address becomes.
enum class HostNames {
    refused,      // listening addresses: IP literals only
    resolve_now,  // looked up at load (getaddrinfo, first result)
    // Only checked: the workers look it up, and again every `resolve`. So
    // `portico -t` makes no DNS query, and a name that does not resolve yet
    // (a Compose service not started, a Kubernetes Service without ready
    // pods) does not stop portico from starting.
    resolve_later,
};

// "127.0.0.1:8080", "[::1]:8080", and "localhost:3000" as `host_names` says.
std::optional<SocketAddress> parse_socket_address(std::string_view text, HostNames host_names);

// The same, saying in `why` what is wrong on failure ("port '99999' is not a
// number 0..65535", "cannot resolve host 'x': ..."), for config messages.
std::optional<SocketAddress> parse_socket_address(std::string_view text, HostNames host_names,
                                                  std::string& why);

// An upstream on a Unix socket at `path` (absolute): text "unix:PATH". Fails
// (with `why`) for a path that sockaddr_un cannot hold.
std::optional<SocketAddress> unix_socket_address(std::string_view path, std::string& why);

}  // namespace portico::config
