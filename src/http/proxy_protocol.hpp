// The PROXY protocol header (HAProxy's proxy-protocol.txt, v1 and v2): what
// a load balancer sends first on each connection to a listener with
// `proxy_protocol = true`, naming the client it accepted. Parsed here from
// the bytes in hand, without I/O; worker/proxy_header_read.* reads it from
// the socket before TLS and before the first request.
#pragma once

#include <cstddef>
#include <string_view>

#include "http/peer_address.hpp"

namespace portico::http {

// v1 is one text line of at most this many bytes, CRLF included.
inline constexpr size_t proxy_v1_max_length = 107;
// v2: the 12-byte signature, version and command, family, and the length of what follows.
inline constexpr size_t proxy_v2_fixed_length = 16;

struct ProxyHeader {
    enum class Status {
        incomplete,  // the bytes are the start of a header: every one of them is part of it
        complete,
        invalid,
    } status = Status::incomplete;
    size_t length = 0;  // complete: the header's bytes; what follows is the client's
    // A PROXY over TCP/IPv4 or TCP/IPv6: `source` is the client. False for
    // v1 UNKNOWN and v2 LOCAL (a balancer's health check) or another family:
    // the connection's peer stays the client.
    bool has_source = false;
    PeerAddress source{};
    std::string_view problem;  // invalid: why, for the log
};

// `bytes`: what the connection has sent so far (more than the header is
// fine). A v2 header longer than `max_length` is invalid (its TLVs are
// skipped, but must fit the reader's buffer).
ProxyHeader parse_proxy_header(std::string_view bytes, size_t max_length);

}  // namespace portico::http
