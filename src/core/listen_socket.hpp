// Listening sockets, created by the master before it forks so that a worker
// that dies, or is replaced on reload, hands its accept queue to its
// successor instead of resetting the connections waiting in it.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <string>

#include "core/unique_fd.hpp"

namespace portico::core {

// A non-blocking, SO_REUSEPORT, listening TCP socket bound to `address`
// (`length` bytes of it; `text` is the address as written, for `error`); if
// the address has port 0 and `*port` is non-zero, that port is used instead
// (so every worker's socket of one `listen` entry shares the ephemeral port
// the first one got). On success `*port` holds the bound port. On failure an
// invalid fd and `error` says why.
UniqueFd open_listen_socket(const sockaddr_storage& address, socklen_t length,
                            const std::string& text, uint16_t* port, std::string& error);

// What holds a TCP port that bind() found in use, for the operator: another
// listener, or only connections (TIME_WAIT, CLOSE_WAIT...) from
// /proc/net/tcp and tcp6, counted by state.
std::string describe_port_holders(uint16_t port);

}  // namespace portico::core
