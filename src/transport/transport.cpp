#include "transport/transport.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

namespace portico::transport {

Transport::~Transport() {
    if (fd_ >= 0) ::close(fd_);
}

void Transport::shutdown_write() { ::shutdown(fd_, SHUT_WR); }

void Transport::close(bool) {
    ::close(fd_);
    fd_ = -1;
}

bool Transport::set_cork(bool on) {
    int value = on;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_CORK, &value, sizeof value);
    return on;
}

ssize_t Socket::read(char* buffer, size_t size) { return ::read(fd_, buffer, size); }

}  // namespace portico::transport
