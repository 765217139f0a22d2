// Finished requests, as the counters' tests feed them to a worker's counters.
#pragma once

#include <cstdint>

#include "metrics/worker_counters.hpp"

namespace portico::test {

// A proxied request's record: 100 bytes out, and the upstream's share of its time.
inline metrics::RequestRecord proxied_request(int status, uint64_t duration_ns, uint64_t upstream_ns) {
    return {.status = status,
            .response_bytes = 100,
            .duration_ns = duration_ns,
            .proxied = true,
            .upstream_ns = upstream_ns};
}

}  // namespace portico::test
