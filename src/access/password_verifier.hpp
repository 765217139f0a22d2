// A worker's password checks for Basic auth: each hash computed off the
// event loop, on libuv's thread pool (bcrypt at cost 10 takes ~60 ms, which
// on the loop would stall every client of the worker), a bounded number at
// a time, and each answer remembered for a while, so the same credentials
// never cost a hash twice within that time: a browser sends them with
// every request, and an attacker repeating a wrong password gets the
// remembered "wrong".
//
// What bounds the loop's share: the loop itself only decodes the header
// and takes a SHA-256 of the credentials (the cache's key, a microsecond);
// the hashes run on the pool, at most max_hashes_in_flight per worker, and
// a request that would start one more is answered 503 with Retry-After.
// Requests with the same credentials while their hash runs wait for that
// same hash.
#pragma once

#include <uv.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "config/config.hpp"
#include "core/log_throttle.hpp"
#include "http/admission.hpp"

namespace portico::access {

// Told on the loop how a hash it waited for came out.
class PasswordWaiter {
public:
    virtual void on_verified(http::Waiting& waiting, bool right) const = 0;

protected:
    ~PasswordWaiter() = default;
};

class PasswordVerifier {
public:
    // libuv's pool has 4 threads per worker by default, which also serve
    // uv_fs_sendfile: half of them stay free for the files.
    static constexpr size_t max_hashes_in_flight = 2;
    // Remembered answers: a right password for a minute, a wrong one for
    // 10 s (so a fixed typo is not refused for long); this many at most.
    static constexpr uint64_t right_for_ms = 60'000;
    static constexpr uint64_t wrong_for_ms = 10'000;
    static constexpr size_t max_remembered = 10'000;

    enum class Answer : uint8_t {
        right,  // remembered
        wrong,  // remembered
        later,  // admission.hold() was called: `waiter` is told
        busy,   // max_hashes_in_flight are running: try again later
    };

    explicit PasswordVerifier(uv_loop_t* loop) : loop_(loop) {}
    ~PasswordVerifier();
    PasswordVerifier(const PasswordVerifier&) = delete;
    PasswordVerifier& operator=(const PasswordVerifier&) = delete;

    // Whether `password` is `entry`'s. `password` must have no NUL byte
    // (crypt(3) would stop there).
    Answer verify(std::string_view password, const config::HtpasswdEntry& entry,
                  http::Admission& admission, const PasswordWaiter& waiter);

    // Hashes running now (tests and the docs' claim).
    size_t in_flight() const { return pending_.size(); }

private:
    using Key = std::array<unsigned char, 32>;  // SHA-256 of the user, hash and password
    struct KeyHash {
        size_t operator()(const Key& key) const;
    };
    struct Remembered {
        bool right;
        uint64_t until_ms;
    };
    struct Job;

    static Key key_of(std::string_view password, const config::HtpasswdEntry& entry);
    static void compute(uv_work_t* work);
    static void computed(uv_work_t* work, int status);
    void remember(const Key& key, bool right);

    uv_loop_t* loop_;
    std::unordered_map<Key, Remembered, KeyHash> remembered_;
    std::unordered_map<Key, Job*, KeyHash> pending_;
    core::LogThrottle busy_log_;
};

}  // namespace portico::access
