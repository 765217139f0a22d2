// respond = { status, body }: a fixed response, for health checks and
// placeholders (nginx's `return`).
#pragma once

#include "config/config.hpp"
#include "http/exchange.hpp"

namespace portico::http {

class RespondHandler final : public Handler {
public:
    explicit RespondHandler(const config::RespondConfig& respond) : respond_(respond) {}
    bool serve(Exchange& exchange) override;

private:
    const config::RespondConfig& respond_;
};

// respond = { status = 444 }: the connection is closed without a response
// (nginx `return 444`); an HTTP/2 stream is reset, its connection kept.
// A default site's "/" that drops the hosts it does not know.
class CloseHandler final : public Handler {
public:
    bool serve(Exchange& exchange) override {
        // A head that never goes out: the access log and the counters say
        // 444, as nginx's do.
        exchange.begin_streamed_response(444);
        exchange.abort();
        return true;
    }
};

}  // namespace portico::http
