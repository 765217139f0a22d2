// The host names of an upstream with `resolve`, looked up by each worker at
// its start and again every interval, off its loop: uv_getaddrinfo runs
// glibc's getaddrinfo on libuv's thread pool (nothing else of portico uses
// that pool). Going through getaddrinfo, rather than a DNS client such as
// c-ares, means /etc/hosts, nsswitch.conf and resolv.conf apply as for any
// other program in the container: Docker's embedded DNS, a Kubernetes pod's
// search domains and ndots. It tells no TTL: the interval stands for one.
//
// Every address of a name becomes a server (Upstream::set_addresses); a
// failed lookup keeps the last answer. Each is logged once per change.
#pragma once

#include <uv.h>

#include <memory>
#include <string>
#include <vector>

#include "http/peer_address.hpp"

namespace portico::proxy {

class Upstream;

class ServerResolver {
public:
    // Starts the first lookups at once.
    ServerResolver(uv_loop_t* loop, Upstream& upstream);
    ServerResolver(const ServerResolver&) = delete;
    ServerResolver& operator=(const ServerResolver&) = delete;

    // At worker exit: no more lookups. One under way on a thread cannot be
    // stopped: the loop waits for its answer, which is ignored.
    void close();
    // Some name has had no answer yet, good or bad.
    bool awaiting_first_answer() const;

private:
    // One host name of the upstream's `servers`.
    struct Lookup {
        uv_getaddrinfo_t request;  // request.data is this Lookup
        ServerResolver* resolver = nullptr;
        size_t entry = 0;  // in the upstream's servers
        bool pending = false;
        bool answered = false;                     // at least once
        std::vector<http::PeerAddress> addresses;  // the last good answer, sorted
        std::string failure;                       // why the last lookup failed; "" after a success
    };

    void start_lookups();
    void start(Lookup& lookup);
    void on_answer(Lookup& lookup, int status, addrinfo* found);
    void on_addresses(Lookup& lookup, std::vector<http::PeerAddress> addresses);
    void on_failure(Lookup& lookup, const char* why);
    static void on_timer(uv_timer_t* timer);
    static void on_lookup_done(uv_getaddrinfo_t* request, int status, addrinfo* found);

    Upstream& upstream_;
    uv_loop_t* loop_;
    uv_timer_t timer_;
    std::vector<std::unique_ptr<Lookup>> lookups_;  // pointers: libuv holds their requests
    bool closed_ = false;
};

}  // namespace portico::proxy
