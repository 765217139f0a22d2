// OpenSSL's error queue as one line for a log or a config message.
#pragma once

#include <string>

namespace portico::tls {

// The reasons queued since the last call, oldest first ("unknown" when none),
// and the queue emptied: a stale entry must not blame the next connection.
std::string take_openssl_errors();

// Empties the queue without reading it.
void clear_openssl_errors();

}  // namespace portico::tls
