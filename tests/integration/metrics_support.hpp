// Reading the counters of a running portico in the integration tests: its
// metrics listener (configured on "127.0.0.1:0"), the /metrics text, and
// one sample of it.
#pragma once

#include <cstdint>
#include <string>

#include "harness.hpp"

namespace portico::test {

// The ephemeral port the metrics listener bound, from the master's log.
uint16_t metrics_port(const Portico& portico);

// The body of a 200 answer to GET `path` on the metrics listener.
std::string scrape(uint16_t port, const std::string& path = "/metrics");

// The value of one sample line ("name{labels} value") of `text`; -1 when absent.
double sample(const std::string& text, const std::string& series);

// A worker records a request just after its last byte is written, so a
// client can read the response a moment before the count moves: scrape
// until `series` reads `expected` (2 s at most), then return the text.
std::string scrape_when(uint16_t port, const std::string& series, double expected);

}  // namespace portico::test
