// The expiry of the certificates portico serves from PEM files ([tls]'s
// `certificates`, a site's `certificate`), for /stats and the dashboard's
// certificate panel beside the ACME ones (acme/stats_json.hpp). Read by
// the master when a config is loaded: files only change with a reload.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/config.hpp"

namespace portico::tls {

struct FileCertificate {
    std::string file;                // the `cert` path
    std::vector<std::string> names;  // the leaf's DNS names (its CN when it has none)
    int64_t not_after = 0;           // Unix seconds; 0 when the file could not be read
};

// Each certificate file of `config` once, in config order (the default first).
std::vector<FileCertificate> read_file_certificates(const config::Config& config);

// "\"tls\":{\"certificates\":[...]}" with each one's names, file, not_after and
// expires_in_seconds at `now`; "" when there are none.
std::string file_certificates_json(const std::vector<FileCertificate>& certificates, int64_t now);

}  // namespace portico::tls
