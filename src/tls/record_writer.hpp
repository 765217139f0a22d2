// What an output queue holds, written as TLS records through a TlsStream:
// the client connections' (TlsTransport) and the upstream connections'
// (UpstreamSession) one way of writing.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tls/tls_stream.hpp"
#include "transport/output_queue.hpp"

namespace portico::tls {

// Where plaintext is staged so a head and a small body share a record, at
// most this much per write(2): a slow reader's unsent bytes stay small.
inline constexpr size_t record_staging_size = 64 * 1024;

// Writes what the peer takes of `output` now, as records of at most 16 KiB
// (with kernel TLS, files by SSL_sendfile); `sent` adds the bytes written.
// Small pieces and file bytes are gathered in `staging` (record_staging_size
// bytes, the worker's) first.
transport::OutputQueue::FlushResult write_records(TlsStream& stream, transport::OutputQueue& output,
                                                  uint64_t& sent, char* staging);

}  // namespace portico::tls
