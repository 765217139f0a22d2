#include "access/location_gate.hpp"

namespace portico::access {

void LocationGate::run_from(size_t next, http::Exchange& exchange, http::Waiting* waiting) {
    http::Admission admission = resume(exchange, waiting);
    // Checks the `index`th: false when it did not pass (the request is
    // answered or waits, then goes on after it).
    auto passes = [&](size_t index, auto& check) {
        if (check == nullptr || next > index) return true;
        http::AdmissionVerdict verdict = check->check(exchange, admission);
        if (verdict == http::AdmissionVerdict::pass) [[likely]]
            return true;
        settle(index + 1, verdict, exchange, admission, waiting);
        return false;
    };
    if (passes(0, checks_.rate) && passes(1, checks_.concurrency) &&
        passes(2, checks_.address) && passes(3, checks_.auth))
        serve_content(exchange, waiting);
}

}  // namespace portico::access
