// The metrics listener ([metrics] listen): its own socket, served by the
// master, so load tests on the traffic ports never hit it and a busy worker
// never delays a scrape. The master's loop is otherwise idle, so each
// request is answered at once, with short socket timeouts bounding what a
// stuck client can cost it.
//
//   GET  /metrics      Prometheus text format 0.0.4
//   GET  /stats        the same as JSON, with percentiles
//   POST /stats/reset  zero every counter: 204
//   GET  /healthz      200 while the workers accept, else 503
#pragma once

#include <functional>
#include <string>

#include "config/config.hpp"
#include "core/unique_fd.hpp"
#include "metrics/shared_counters.hpp"

namespace portico::metrics {

class AdminEndpoint {
public:
    // Binds `address`; false and `error` when it can't.
    bool open(const config::SocketAddress& address, std::string& error);
    int fd() const { return socket_.get(); }
    const std::string& address() const { return address_; }

    // Accepts and answers the connections waiting on the socket.
    void serve_pending(SharedCounters& counters, const std::function<bool()>& healthy);

private:
    void serve_one(int client, SharedCounters& counters, const std::function<bool()>& healthy);
    core::UniqueFd socket_;
    std::string address_;
};

}  // namespace portico::metrics
