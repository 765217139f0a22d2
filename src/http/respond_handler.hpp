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

}  // namespace portico::http
