// What the client address tests share: PROXY protocol headers made by hand,
// and the JSON access log's "client" fields.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace portico::test {

// "PROXY TCP4 SOURCE 127.0.0.1 PORT 80\r\n" (TCP6 for an IPv6 source).
std::string proxy_v1(const std::string& source, uint16_t port = 40000);
// v2 headers: PROXY over TCP/IPv4 or TCP/IPv6 from `source`, and LOCAL.
std::string proxy_v2(const std::string& source, uint16_t port = 40000);
std::string proxy_v2_local();

// The "client" of each line of a JSON access log, in order, once it has
// at least `count` lines (waits up to 5 s for them).
std::vector<std::string> access_log_clients(const std::string& path, size_t count);
// The string values of one field of the JSON access log's lines, likewise.
std::vector<std::string> access_log_values(const std::string& path, const std::string& field,
                                           size_t count);

}  // namespace portico::test
