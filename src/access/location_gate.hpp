// A location's admission checks, decided at composition (the worker makes
// one only for a location with any): nginx's preaccess phase (limit_req,
// then limit_conn), then its access phase (allow/deny, then auth_basic).
// Each check the location has is called directly, the cheap ones (the
// limit, allow/deny) inlined, so a limited location pays one virtual call
// (serve_location's) for all of them rather than one per check.
#pragma once

#include <memory>

#include "access/address_rules.hpp"
#include "access/basic_auth.hpp"
#include "access/concurrency_limit.hpp"
#include "access/rate_limit.hpp"
#include "http/admission.hpp"

namespace portico::access {

class LocationGate final : public http::AdmissionGate {
public:
    // Each check may be nullptr (the location has none), not all of them.
    struct Checks {
        std::unique_ptr<RateLimitCheck> rate;
        std::unique_ptr<ConcurrencyLimitCheck> concurrency;
        std::unique_ptr<AddressRulesCheck> address;
        std::unique_ptr<BasicAuthCheck> auth;
    };
    LocationGate(http::WaitingPool& pool, const http::LocationServing& serving, Checks checks)
        : AdmissionGate(pool, serving), checks_(std::move(checks)) {}

    void serve(http::Exchange& exchange) override;

private:
    void run_from(size_t next, http::Exchange& exchange, http::Waiting* waiting) override;
    // What both do, inlined into each: serve()'s copy runs without the
    // tests a resumption needs.
    [[gnu::always_inline]] void run(size_t next, http::Exchange& exchange, http::Waiting* waiting);

    Checks checks_;
};

}  // namespace portico::access
