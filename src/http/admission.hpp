// What a request must pass between its routing and its location's content
// when passing can take time (nginx's preaccess and access phases): a rate
// limit that makes it wait its turn, a password hash computed off the loop.
// The checks are the location's gate, which serve_location calls before
// its handlers, so both codecs run them the same way and a location
// without checks has no gate at all.
//
// A check answers at once (pass, or refused with a response written) or
// asks the request to wait. Only then is a Waiting taken from the worker's
// pool: the request's body is held meanwhile (Exchange::hold_request_body:
// the client is not read, nothing is lost), and the Waiting hears the
// client leave. Once the checks are done the body flows again: before the
// content when the request is complete already, else when the handler
// that takes it listens (a handler that listens resumes the body once it
// does; one that answers lets the codec drop the rest after its response).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/lazy_timer.hpp"
#include "http/exchange.hpp"
#include "http/request_routing.hpp"
#include "http/server_context.hpp"

namespace portico::core {
class IoPoller;
}

namespace portico::http {

class Waiting;
class WaitingPool;

// One condition, checked on the request's exchange. `wait` is either a
// delay (wait_ms set: the gate goes on by itself after it) or work the
// check started with the Waiting it asked for (admission.hold()), which it
// ends with Waiting::pass() or Waiting::answer().
class Admission {
public:
    // The request's client (Exchange::client_address()), read once for
    // all the checks.
    const PeerAddress& client() const { return client_; }
    // The request waits `ms`, then goes on with the next check.
    void wait_ms(uint64_t ms) { wait_ms_ = ms; }
    // The request waits until the check calls pass() or answer() on the
    // result (from the loop, never from another thread).
    Waiting& hold();

private:
    friend class AdmissionGate;
    Admission(WaitingPool& pool, Waiting* waiting, const PeerAddress& client)
        : pool_(pool), held_(waiting), client_(client) {}
    WaitingPool& pool_;
    Waiting* held_;  // the request's Waiting, once it has one
    const PeerAddress& client_;
    bool hold_asked_ = false;
    uint64_t wait_ms_ = 0;
};

// A check's answer on a request (each check of access/ has
// `Verdict check(Exchange&, Admission&)`).
enum class AdmissionVerdict : uint8_t {
    pass,      // on with the next check, then the content
    answered,  // refused: the check wrote the response on the exchange
    wait,      // admission.wait_ms() or admission.hold() was called
};

// A location's checks in order, then its handlers (LocationServing::gate;
// `serving`'s handlers, tried in order as serve_location does). The checks
// are the subclass's (access/location_gate.hpp), which calls each of them
// directly, in one function: a limited location pays one virtual call for
// all of them.
class AdmissionGate {
public:
    virtual ~AdmissionGate() = default;
    // run_from(0, exchange, nullptr), apart: the first run, every
    // request's, needs neither.
    virtual void serve(Exchange& exchange) = 0;

protected:
    AdmissionGate(WaitingPool& pool, const LocationServing& serving)
        : pool_(pool), serving_(serving) {}
    // Runs the checks from the `next`th on (a request that waited goes on
    // after the check that made it wait), then serve_content once all have
    // passed. `waiting`: the request's Waiting, if it waited before; the
    // subclass starts with resume(), and ends with settle() or serve_content().
    virtual void run_from(size_t next, Exchange& exchange, Waiting* waiting) = 0;
    // What the checks are asked with.
    Admission resume(Exchange& exchange, Waiting* waiting) {
        // Between checks nobody listens: a check that answers ends the
        // request without a Waiting in the way.
        if (waiting != nullptr) [[unlikely]]
            exchange.set_listener(nullptr);
        return Admission(pool_, waiting, exchange.client_address());
    }
    // A check answered or asked to wait (any verdict but pass): `next` is
    // the check after it.
    void settle(size_t next, AdmissionVerdict verdict, Exchange& exchange, Admission& admission,
                Waiting* waiting);
    // All the checks passed: the handlers.
    void serve_content(Exchange& exchange, Waiting* waiting) {
        if (waiting == nullptr) [[likely]]
            serve_handlers(serving_.handlers, exchange);
        else
            serve_after_waiting(exchange, *waiting);
    }

private:
    friend class Waiting;
    void serve_after_waiting(Exchange& exchange, Waiting& waiting);

    WaitingPool& pool_;
    const LocationServing& serving_;  // its handlers
};

// A request between its checks. Back to its pool once the request goes
// on, is refused, or its client leaves, and the check holding it (if any)
// has let go.
class Waiting final : private ExchangeListener {
public:
    Exchange& exchange() { return *exchange_; }
    bool client_gone() const { return gone_; }
    // From a check that held it: the request passed this check. Nothing
    // happens if the client left meanwhile.
    void pass();
    // From a check that held it: the request is refused. Returns the
    // exchange to answer on, or nullptr when the client left (nothing to
    // answer). The Waiting is done; the codec drops the held body once the
    // response is out.
    Exchange* answer();

private:
    friend class WaitingPool;
    friend class AdmissionGate;
    friend class Admission;
    static void on_timer(void* waiting);

    // ExchangeListener: the client, while the request waits. Its body is
    // held meanwhile, so only its leaving is heard.
    bool on_request_body(std::string_view) override { return false; }
    void on_request_complete() override {}
    void on_output_drained() override {}
    void on_client_gone() override;

    void done();

    WaitingPool* pool_ = nullptr;
    AdmissionGate* gate_ = nullptr;
    Exchange* exchange_ = nullptr;
    size_t next_check_ = 0;
    core::LazyTimer timer_;
    bool gone_ = false;
    bool held_ = false;  // by a check, until pass() or answer()
};

// A worker's Waitings, reused (their timers and body buffers with them).
class WaitingPool {
public:
    explicit WaitingPool(core::IoPoller& poller) : poller_(poller) {}
    ~WaitingPool();
    Waiting& acquire();
    void release(Waiting& waiting);

private:
    core::IoPoller& poller_;
    std::vector<std::unique_ptr<Waiting>> all_;
    std::vector<Waiting*> free_;
};

}  // namespace portico::http
