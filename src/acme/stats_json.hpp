// The "acme" and "ocsp" members of /stats. "acme": per site with
// `acme = true`, its names, the served certificate's expiry, the next
// attempt and the last ACME error, and its staple's ocsp_* keys. "ocsp":
// per certificate loaded from a file, its file, names and ocsp_* keys
// (ocsp_status, ocsp_this_update, ocsp_next_update, ocsp_next_fetch,
// ocsp_last_error).
#pragma once

#include <string>

#include "acme/board.hpp"
#include "acme/staple_board.hpp"
#include "config/config.hpp"
#include "tls/server_tls.hpp"

namespace portico::acme {

// "\"acme\":{\"certificates\":[...]}" when `board` is set, then
// "\"ocsp\":{\"certificates\":[...]}" when `staples` is (with `tls`, whose
// slots they are); "" when neither is.
std::string stats_json(const config::Config& config, const Board* board, const StapleBoard* staples,
                       const tls::ServerTls* tls);

}  // namespace portico::acme
