#include "access/location_gate.hpp"

namespace portico::access {

void LocationGate::serve(http::Exchange& exchange) {
    run(0, exchange, nullptr);
}

void LocationGate::run_from(size_t next, http::Exchange& exchange, http::Waiting* waiting) {
    run(next, exchange, waiting);
}

inline void LocationGate::run(size_t next, http::Exchange& exchange, http::Waiting* waiting) {
    http::Admission admission = resume(exchange, waiting);
    // The `index`th check: false when it did not pass (the request is
    // answered, or waits and then goes on after it).
    auto passes = [&](size_t index, auto& check) __attribute__((always_inline)) {
        http::AdmissionVerdict verdict = check->check(exchange, admission);
        if (verdict == http::AdmissionVerdict::pass) [[likely]]
            return true;
        settle(index + 1, verdict, exchange, admission, waiting);
        return false;
    };
    // In nginx's order, from the `next`th on.
    switch (next) {
    case 0:
        if (checks_.rate && !passes(0, checks_.rate)) return;
        [[fallthrough]];
    case 1:
        if (checks_.concurrency && !passes(1, checks_.concurrency)) return;
        [[fallthrough]];
    case 2:
        if (checks_.address && !passes(2, checks_.address)) return;
        [[fallthrough]];
    case 3:
        if (checks_.auth && !passes(3, checks_.auth)) return;
    }
    serve_content(exchange, waiting);
}

}  // namespace portico::access
