// The OCSP responses the ACME process fetches (acme/staples.hpp), handed to
// the workers in shared memory made by the master before it forks: a slot
// per served certificate (tls::ServerTls's staple slots), each a sequence
// lock (acme/sequence_lock.hpp), so a worker never waits for the fetcher.
// Each slot also holds the staple's state for /stats.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/shared_memory.hpp"
#include "tls/staple_feed.hpp"

namespace portico::acme {

struct Staple {
    tls::CertificateDigest certificate{};  // the certificate the response is about
    std::string response;                  // DER; empty: none yet
    std::string status;                    // "good" or "revoked"; "": none yet
    int64_t this_update = 0;               // Unix seconds
    int64_t next_update = 0;               // 0: the responder gave none
    int64_t next_fetch = 0;                // when the next fetch is due (Unix seconds)
    std::string last_error;                // empty: the last fetch worked
};

class StapleBoard final : public tls::StapleFeed {
public:
    static constexpr size_t max_response = 16 * 1024;  // a response and its signer's certificate
    static constexpr size_t max_error = 512;
    static constexpr size_t max_status = 16;

    // A region for `slots` slots; nullptr when the system gives no shared
    // memory (`error` says why).
    static std::unique_ptr<StapleBoard> create(size_t slots, std::string& error);
    ~StapleBoard() override;
    StapleBoard(const StapleBoard&) = delete;
    StapleBoard& operator=(const StapleBoard&) = delete;

    // The writer's side (the ACME process). A response longer than
    // max_response is not published (the slot keeps none).
    void publish(size_t slot, const Staple& staple);

    // The readers' side.
    uint64_t version(size_t slot) const override;
    bool read(size_t slot, std::string& response, tls::CertificateDigest& certificate,
              int64_t& next_update, uint64_t& version) const override;
    // Everything but the response (/stats).
    Staple state(size_t slot) const;
    size_t slots() const { return slots_; }

private:
    struct Slot;
    StapleBoard(std::unique_ptr<core::SharedMemory> memory, Slot* slots, size_t count)
        : memory_(std::move(memory)), slots_at_(slots), slots_(count) {}
    std::unique_ptr<core::SharedMemory> memory_;  // mapped before the fork: the workers share it
    Slot* slots_at_;
    size_t slots_;
};

}  // namespace portico::acme
