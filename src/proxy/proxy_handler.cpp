#include "proxy/proxy_handler.hpp"

#include "proxy/proxy_exchange.hpp"

namespace portico::proxy {

bool ProxyHandler::serve(http::Exchange& exchange) {
    // It frees itself when the exchange is over.
    (new ProxyExchange(exchange, upstream_, rules_, buffers_, response_buffers_, poller_))->start();
    return true;
}

}  // namespace portico::proxy
