// The metrics listener ([metrics] listen): its own socket, served by the
// master, so load tests on the traffic ports never hit it and a busy worker
// never delays a scrape. What it answers: metrics/admin_routes.hpp.
//
// The master also restarts workers and handles signals, so it must never
// wait on a client: every socket is non-blocking and watched by the
// master's poll(2) beside its own descriptors; a request must arrive whole
// within client_timeout, a response make progress within it, and at most
// max_connections are open (the rest wait in the listen backlog).
#pragma once

#include <poll.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "core/unique_fd.hpp"
#include "metrics/admin_routes.hpp"

namespace portico::worker {

class AdminEndpoint {
public:
    static constexpr size_t max_connections = 64;
    static constexpr int64_t client_timeout_ms = 5000;

    // Binds `address`; false and `error` when it can't.
    bool open(const config::SocketAddress& address, std::string& error);
    int fd() const { return socket_.get(); }
    const std::string& address() const { return address_; }

    // Appends the descriptors to watch (the listener while there is room,
    // then each connection) to `fds`.
    void add_poll_fds(std::vector<pollfd>& fds) const;
    // Handles what poll(2) reported for the descriptors add_poll_fds added
    // (`fds` is that part, in the same order): accepts, reads, answers,
    // writes, and closes what is done or past its deadline.
    void on_poll(std::span<const pollfd> fds, metrics::AdminContext& context, int64_t now_ms);
    // Milliseconds until the earliest connection deadline; -1 with none.
    int64_t next_deadline_ms(int64_t now_ms) const;
    size_t connection_count() const { return connections_.size(); }

private:
    struct Connection {
        core::UniqueFd fd;
        std::string input;
        std::string output;  // the whole response, once the request is in
        size_t sent = 0;
        int64_t deadline_ms = 0;
        bool done = false;
    };
    void accept_pending(int64_t now_ms);
    void read_request(Connection& connection, metrics::AdminContext& context, int64_t now_ms);
    void write_response(Connection& connection, int64_t now_ms);

    core::UniqueFd socket_;
    std::string address_;
    std::vector<Connection> connections_;
};

}  // namespace portico::worker
