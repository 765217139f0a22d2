// large_send_buffer: a larger socket send buffer for a fast reader of a
// large response (see SendBuffer::raise), used only where the kernel grants
// more than its own autotuning reaches.
#pragma once

#include <cstdint>

namespace portico::transport {

struct SendBuffer {
    // What the kernel grants for `wanted` bytes (config.server.large_send_buffer),
    // read back from a socket of our own; unused (size 0) when that is no
    // more than autotuning's maximum. `say_why`: log why it is unused
    // (every worker comes to the same answer, the first one says it).
    static SendBuffer probe(uint64_t wanted, bool say_why);

    // Called when a write blocks with `pending` bytes still to send: raises
    // the socket's buffer once autotuning took it to its maximum, so a 10
    // MiB file takes half the wakeups. False when not (yet) done.
    bool raise(int fd, uint64_t pending) const;

    int size = 0;         // as set on a socket (0: not used)
    uint64_t from = 0;    // autotuning's maximum: the bytes pending and the
                          // buffer a socket must have reached first
};

}  // namespace portico::transport
