// proxy = "NAME" or "http://host:port[/path]": forwards the request to the
// location's upstream pool, with the location's rules (proxy_path,
// proxy_headers, hide_headers). Each request becomes a ProxyExchange.
#pragma once

#include "core/buffer_pool.hpp"
#include "core/io_poller.hpp"
#include "http/exchange.hpp"
#include "proxy/upstream.hpp"
#include "proxy/upstream_request_rules.hpp"

namespace portico::proxy {

class ProxyHandler final : public http::Handler {
public:
    // `location`: whose proxy_path, proxy_headers and hide_headers apply.
    ProxyHandler(Upstream& upstream, const config::LocationConfig& location,
                 core::BufferPool& buffers, core::BufferPool& response_buffers,
                 core::IoPoller& poller)
        : upstream_(upstream),
          rules_(location),
          buffers_(buffers),
          response_buffers_(response_buffers),
          poller_(poller) {}
    bool serve(http::Exchange& exchange) override;
    bool streams_request_body() const override { return true; }

private:
    Upstream& upstream_;
    UpstreamRequestRules rules_;
    core::BufferPool& buffers_;
    core::BufferPool& response_buffers_;
    core::IoPoller& poller_;
};

}  // namespace portico::proxy
