// What the ACME process tells the workers and the master, in one shared
// memory region made by the master before it forks: each site's newest
// certificate (the workers' TLS picks it up at its next handshake), the
// HTTP-01 challenges being answered, and each site's state for /stats.
//
// One writer (the ACME process), many readers; every slot is a sequence
// lock: the writer makes the sequence odd, writes, makes it even again, and
// a reader copies and retries when the sequence moved meanwhile. Nothing
// here blocks, and a worker never waits for the ACME process.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/shared_memory.hpp"
#include "tls/certificate_feed.hpp"

namespace portico::acme {

// A site's state as /stats shows it.
struct SiteState {
    int64_t not_after = 0;     // the served certificate's expiry (Unix seconds), 0: none yet
    int64_t next_attempt = 0;  // when the next order or retry is due (Unix seconds)
    std::string last_error;    // empty: the last attempt worked (or none failed)
};

class Board final : public tls::CertificateFeed {
public:
    static constexpr size_t max_pem = 32 * 1024;  // a chain of four and a key, with room
    static constexpr size_t max_challenges = 64;
    static constexpr size_t max_token = 128;
    static constexpr size_t max_authorization = 256;
    static constexpr size_t max_error = 512;
    // TLS-ALPN-01: a self-signed certificate and key per name being validated.
    static constexpr size_t max_alpn_challenges = 16;
    static constexpr size_t max_name = 256;
    static constexpr size_t max_alpn_pem = 4096;

    // A region for `sites` sites (config::Config::sites' indices); nullptr
    // when the system gives no shared memory (`error` says why).
    static std::unique_ptr<Board> create(size_t sites, std::string& error);
    ~Board() override;
    Board(const Board&) = delete;
    Board& operator=(const Board&) = delete;

    // The writer's side (the ACME process).
    void publish_certificate(size_t site, std::string_view chain, std::string_view key);
    void publish_state(size_t site, const SiteState& state);
    // false when every challenge slot is taken.
    bool publish_challenge(std::string_view token, std::string_view key_authorization);
    void withdraw_challenge(std::string_view token);
    // false when every TLS-ALPN-01 slot is taken or the PEM is too long.
    bool publish_alpn_challenge(std::string_view name, std::string_view chain,
                                std::string_view key);
    void withdraw_alpn_challenge(std::string_view name);

    // The readers' side.
    uint64_t version(size_t site) const override;
    bool read(size_t site, std::string& chain, std::string& key, uint64_t& version) const override;
    std::optional<std::string> key_authorization(std::string_view token) const;
    bool challenge_certificate(std::string_view name, std::string& chain,
                               std::string& key) const override;
    SiteState state(size_t site) const;
    size_t sites() const { return sites_; }

private:
    struct Region;
    Board(std::unique_ptr<core::SharedMemory> memory, Region* region, size_t sites)
        : memory_(std::move(memory)), region_(region), sites_(sites) {}
    std::unique_ptr<core::SharedMemory> memory_;  // mapped before the fork: the workers share it
    Region* region_;
    size_t sites_;
};

}  // namespace portico::acme
