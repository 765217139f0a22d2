// A filter a location puts between its handlers and the client connection
// (nginx's header and body filter chains, H2O's ostreams): the handlers
// answer through the exchange it gives them and never know it is there.
// Compression is one (compress/compression_filter.hpp).
#pragma once

#include "http/exchange.hpp"

namespace portico::http {

class ResponseFilter {
public:
    virtual ~ResponseFilter() = default;
    // The exchange this request's handlers answer through: `client` itself
    // when the filter has nothing to do for the request. A filtering
    // exchange lives until its response is out or the client is gone.
    virtual Exchange& wrap(Exchange& client) = 0;
};

}  // namespace portico::http
