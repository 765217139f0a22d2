// proxy = "NAME" or "http://host:port": forwards the request to the
// location's upstream pool. Each request becomes a ProxyExchange.
#pragma once

#include <uv.h>

#include "core/buffer_pool.hpp"
#include "http/exchange.hpp"
#include "proxy/upstream.hpp"

namespace portico::proxy {

class ProxyHandler final : public http::Handler {
public:
    ProxyHandler(Upstream& upstream, core::BufferPool& buffers, core::BufferPool& response_buffers,
                 uv_loop_t* loop)
        : upstream_(upstream), buffers_(buffers), response_buffers_(response_buffers), loop_(loop) {}
    bool serve(http::Exchange& exchange) override;
    bool streams_request_body() const override { return true; }

private:
    Upstream& upstream_;
    core::BufferPool& buffers_;
    core::BufferPool& response_buffers_;
    uv_loop_t* loop_;
};

}  // namespace portico::proxy
