#include "http/server_context.hpp"

#include <algorithm>

namespace portico::http {

namespace {

// Input buffers hold a whole request head, with room to spare for body reads.
size_t buffer_size_for(const config::ServerConfig& server) {
    return std::max<size_t>(server.max_header_bytes + 1, 16 * 1024);
}

}  // namespace

ServerContext::ServerContext(uv_loop_t* loop, const config::Config& config,
                             metrics::WorkerCounters counters, unsigned worker_index)
    : loop(loop),
      poller(loop),
      config(config),
      counters(std::move(counters)),
      access_log(config.log),
      worker_index(worker_index),
      sites(config),
      buffers(buffer_size_for(config.server)),
      serving(config.locations.size()),
      send_buffer(
          transport::SendBuffer::probe(config.server.large_send_buffer, worker_index == 0)) {}

void ServerContext::add_connection(OpenConnection& connection) {
    connection.next = connections;
    if (connections) connections->prev = &connection;
    connections = &connection;
    ++connection_count;
}

void ServerContext::remove_connection(OpenConnection& connection) {
    if (connection.prev)
        connection.prev->next = connection.next;
    else
        connections = connection.next;
    if (connection.next) connection.next->prev = connection.prev;
    --connection_count;
}

}  // namespace portico::http
