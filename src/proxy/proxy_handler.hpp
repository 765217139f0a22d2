// proxy = "NAME" or "http://host:port": forwards the request to the
// location's upstream pool. Each request becomes a ProxyExchange.
#pragma once

#include "core/buffer_pool.hpp"
#include "core/io_poller.hpp"
#include "http/exchange.hpp"
#include "proxy/upstream.hpp"

namespace portico::proxy {

class ProxyHandler final : public http::Handler {
public:
    ProxyHandler(Upstream& upstream, core::BufferPool& buffers, core::BufferPool& response_buffers,
                 core::IoPoller& poller)
        : upstream_(upstream), buffers_(buffers), response_buffers_(response_buffers), poller_(poller) {}
    bool serve(http::Exchange& exchange) override;
    bool streams_request_body() const override { return true; }

private:
    Upstream& upstream_;
    core::BufferPool& buffers_;
    core::BufferPool& response_buffers_;
    core::IoPoller& poller_;
};

}  // namespace portico::proxy
