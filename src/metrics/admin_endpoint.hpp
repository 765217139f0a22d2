// The metrics listener ([metrics] listen): its own socket, served by the
// master, so load tests on the traffic ports never hit it and a busy worker
// never delays a scrape. The master's loop is otherwise idle, so each
// request is answered at once, with short socket timeouts bounding what a
// stuck client can cost it. What it answers: admin_routes.hpp.
#pragma once

#include <string>

#include "config/config.hpp"
#include "core/unique_fd.hpp"
#include "metrics/admin_routes.hpp"

namespace portico::metrics {

class AdminEndpoint {
public:
    // Binds `address`; false and `error` when it can't.
    bool open(const config::SocketAddress& address, std::string& error);
    int fd() const { return socket_.get(); }
    const std::string& address() const { return address_; }

    // Accepts and answers the connections waiting on the socket.
    void serve_pending(AdminContext& context);

private:
    void serve_one(int client, AdminContext& context);
    core::UniqueFd socket_;
    std::string address_;
};

}  // namespace portico::metrics
