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

// "127.0.0.1:8080", "[::1]:8080"; with allow_hostname, "localhost:3000" is
// resolved (getaddrinfo, first result) at load time.
std::optional<SocketAddress> parse_socket_address(std::string_view text, bool allow_hostname);

// The same, saying in `why` what is wrong on failure ("port '99999' is not a
// number 0..65535", "cannot resolve host 'x': ..."), for config messages.
std::optional<SocketAddress> parse_socket_address(std::string_view text, bool allow_hostname,
                                                  std::string& why);

}  // namespace portico::config
