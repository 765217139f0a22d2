// A certificate chain and its key loaded into an OpenSSL context, with the
// problems said as a config message: the server's certificates
// (ServerTls) and an upstream's client certificate (UpstreamTlsSet).
#pragma once

#include <openssl/ssl.h>

#include <string>

#include "config/config.hpp"

namespace portico::tls {

// "" when `files` loaded into `context` and the key matches the
// certificate; else why not, naming the file.
std::string use_certificate_files(SSL_CTX* context, const config::CertificateFiles& files);

// "" when `path` can be opened for reading, else strerror's reason.
std::string readable_file_problem(const std::string& path);

}  // namespace portico::tls
