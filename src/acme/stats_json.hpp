// The "acme" member of /stats: per site with `acme = true`, its names, the
// served certificate's expiry, the next attempt and the last ACME error.
#pragma once

#include <string>

#include "acme/board.hpp"
#include "config/config.hpp"

namespace portico::acme {

// "\"acme\":{\"certificates\":[...]}", read from the board.
std::string stats_json(const config::Config& config, const Board& board);

}  // namespace portico::acme
