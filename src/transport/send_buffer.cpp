#include "transport/send_buffer.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "core/log.hpp"

namespace portico::transport {

namespace {

// The last number in a /proc/sys file (tcp_wmem holds min, default, max);
// 0 when it cannot be read.
uint64_t last_sysctl_number(const char* path) {
    std::ifstream in(path);
    uint64_t number = 0;
    for (uint64_t next; in >> next;) number = next;
    return number;
}

}  // namespace

// A socket's send buffer grows by itself (autotuning) up to tcp_wmem's
// maximum, 4 MiB by default. SO_SNDBUF locks it at the value asked, capped
// at net.core.wmem_max (208 KiB by default, which would shrink it) and
// doubled. So the option is used only where the kernel grants more than
// autotuning reaches; what it grants is read back from a socket of our
// own, since wmem_max is not readable in every container.
SendBuffer SendBuffer::probe(uint64_t wanted, bool say_why) {
    uint64_t autotuned = last_sysctl_number("/proc/sys/net/ipv4/tcp_wmem");
    if (wanted == 0 || autotuned == 0) return {};
    int asked = static_cast<int>(wanted);  // at most 1 GiB (config)
    int granted = 0;
    socklen_t length = sizeof granted;
    int probe = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    bool read_back = probe >= 0 &&
                     ::setsockopt(probe, SOL_SOCKET, SO_SNDBUF, &asked, sizeof asked) == 0 &&
                     ::getsockopt(probe, SOL_SOCKET, SO_SNDBUF, &granted, &length) == 0;
    int probe_error = errno;
    if (probe >= 0) ::close(probe);
    if (!read_back) {
        if (say_why)
            log::warn("large_send_buffer not used: could not ask the kernel what it grants ({})",
                      std::strerror(probe_error));
        return {};
    }
    if (static_cast<uint64_t>(granted) <= autotuned) {
        if (say_why)
            log::warn(
                "large_send_buffer not used: the kernel grants {} bytes for it, no more "
                "than autotuning's {} (raise net.core.wmem_max to use it)",
                granted, autotuned);
        return {};
    }
    return {asked, autotuned};
}

// More to send than autotuning's largest buffer holds, to a reader fast
// enough that autotuning took the buffer there: a larger one takes the
// response in fewer wakeups (a 10 MiB file: half). Not for a slower
// reader: a blocked socket wakes its writer only once a third of its buffer
// is free, and send_timeout is the gap between two writes, so a larger
// buffer would give a slow reader more to drain in that time. A slow
// reader pays a getsockopt per blocked write.
bool SendBuffer::raise(int fd, uint64_t pending) const {
    if (size == 0 || pending <= from) return false;
    int current = 0;
    socklen_t length = sizeof current;
    if (::getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &current, &length) != 0 ||
        static_cast<uint64_t>(current) < from)
        return false;
    ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
    return true;
}

}  // namespace portico::transport
