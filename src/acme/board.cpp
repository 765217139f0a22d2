#include "acme/board.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>

#include "acme/sequence_lock.hpp"

namespace portico::acme {

struct Board::Region {
    struct Certificate {
        std::atomic<uint64_t> sequence{0};  // 0: none yet
        uint32_t chain_length = 0;
        uint32_t key_length = 0;
        char pem[max_pem];  // the chain, then the key
    };
    struct State {
        std::atomic<uint64_t> sequence{0};
        int64_t not_after = 0;
        int64_t next_attempt = 0;
        uint32_t error_length = 0;
        char error[max_error];
    };
    struct Challenge {
        std::atomic<uint64_t> sequence{0};
        uint32_t token_length = 0;  // 0: a free slot
        uint32_t authorization_length = 0;
        char token[max_token];
        char authorization[max_authorization];
    };
    struct AlpnChallenge {
        std::atomic<uint64_t> sequence{0};
        uint32_t name_length = 0;  // 0: a free slot
        uint32_t chain_length = 0;
        uint32_t key_length = 0;
        char name[max_name];
        char pem[max_alpn_pem];  // the certificate, then the key
    };
    Challenge challenges[max_challenges];
    AlpnChallenge alpn_challenges[max_alpn_challenges];
    // Then, per site, a Certificate and a State (sites_ of each).
    Certificate* certificates() { return reinterpret_cast<Certificate*>(this + 1); }
    State* states(size_t sites) { return reinterpret_cast<State*>(certificates() + sites); }
};

std::unique_ptr<Board> Board::create(size_t sites, std::string& error) {
    size_t bytes = sizeof(Region) + sites * (sizeof(Region::Certificate) + sizeof(Region::State));
    std::unique_ptr<core::SharedMemory> memory = core::SharedMemory::map(bytes, error);
    if (!memory) return nullptr;
    auto* region = new (memory->data()) Region();
    for (size_t site = 0; site < sites; ++site) {
        new (region->certificates() + site) Region::Certificate();
        new (region->states(sites) + site) Region::State();
    }
    return std::unique_ptr<Board>(new Board(std::move(memory), region, sites));
}

Board::~Board() = default;

void Board::publish_certificate(size_t site, std::string_view chain, std::string_view key) {
    Region::Certificate& slot = region_->certificates()[site];
    Writing writing(slot.sequence);
    slot.chain_length = static_cast<uint32_t>(copy_in(slot.pem, max_pem, chain));
    slot.key_length = static_cast<uint32_t>(
        copy_in(slot.pem + slot.chain_length, max_pem - slot.chain_length, key));
}

void Board::publish_state(size_t site, const SiteState& state) {
    Region::State& slot = region_->states(sites_)[site];
    Writing writing(slot.sequence);
    slot.not_after = state.not_after;
    slot.next_attempt = state.next_attempt;
    slot.error_length = static_cast<uint32_t>(copy_in(slot.error, max_error, state.last_error));
}

bool Board::publish_challenge(std::string_view token, std::string_view key_authorization) {
    if (token.empty() || token.size() > max_token || key_authorization.size() > max_authorization)
        return false;
    for (Region::Challenge& slot : region_->challenges) {
        if (slot.token_length != 0) continue;
        Writing writing(slot.sequence);
        slot.authorization_length = static_cast<uint32_t>(
            copy_in(slot.authorization, max_authorization, key_authorization));
        slot.token_length = static_cast<uint32_t>(copy_in(slot.token, max_token, token));
        return true;
    }
    return false;
}

void Board::withdraw_challenge(std::string_view token) {
    for (Region::Challenge& slot : region_->challenges) {
        if (std::string_view(slot.token, slot.token_length) != token) continue;
        Writing writing(slot.sequence);
        slot.token_length = 0;
    }
}

bool Board::publish_alpn_challenge(std::string_view name, std::string_view chain,
                                   std::string_view key) {
    if (name.empty() || name.size() > max_name || chain.size() + key.size() > max_alpn_pem)
        return false;
    for (Region::AlpnChallenge& slot : region_->alpn_challenges) {
        if (slot.name_length != 0) continue;
        Writing writing(slot.sequence);
        slot.chain_length = static_cast<uint32_t>(copy_in(slot.pem, max_alpn_pem, chain));
        slot.key_length = static_cast<uint32_t>(
            copy_in(slot.pem + slot.chain_length, max_alpn_pem - slot.chain_length, key));
        slot.name_length = static_cast<uint32_t>(copy_in(slot.name, max_name, name));
        return true;
    }
    return false;
}

void Board::withdraw_alpn_challenge(std::string_view name) {
    for (Region::AlpnChallenge& slot : region_->alpn_challenges) {
        if (std::string_view(slot.name, slot.name_length) != name) continue;
        Writing writing(slot.sequence);
        slot.name_length = 0;
    }
}

bool Board::challenge_certificate(std::string_view name, std::string& chain,
                                  std::string& key) const {
    for (const Region::AlpnChallenge& slot : region_->alpn_challenges) {
        bool found = false;
        read_stable(slot.sequence, [&] {
            uint32_t length = std::min<uint32_t>(slot.name_length, max_name);
            found = length != 0 && std::string_view(slot.name, length) == name;
            if (!found) return;
            uint32_t chain_length = std::min<uint32_t>(slot.chain_length, max_alpn_pem);
            chain.assign(slot.pem, chain_length);
            key.assign(slot.pem + chain_length,
                       std::min<uint32_t>(slot.key_length, max_alpn_pem - chain_length));
        });
        if (found) return true;
    }
    return false;
}

uint64_t Board::version(size_t site) const {
    return region_->certificates()[site].sequence.load(std::memory_order_acquire);
}

bool Board::read(size_t site, std::string& chain, std::string& key, uint64_t& version) const {
    const Region::Certificate& slot = region_->certificates()[site];
    version = read_stable(slot.sequence, [&] {
        uint32_t chain_length = std::min<uint32_t>(slot.chain_length, max_pem);
        uint32_t key_length = std::min<uint32_t>(slot.key_length, max_pem - chain_length);
        chain.assign(slot.pem, chain_length);
        key.assign(slot.pem + chain_length, key_length);
    });
    return version != 0 && !chain.empty();
}

std::optional<std::string> Board::key_authorization(std::string_view token) const {
    for (const Region::Challenge& slot : region_->challenges) {
        std::optional<std::string> found;
        read_stable(slot.sequence, [&] {
            found.reset();
            uint32_t length = std::min<uint32_t>(slot.token_length, max_token);
            if (length != 0 && std::string_view(slot.token, length) == token)
                found.emplace(slot.authorization,
                              std::min<uint32_t>(slot.authorization_length, max_authorization));
        });
        if (found) return found;
    }
    return std::nullopt;
}

SiteState Board::state(size_t site) const {
    const Region::State& slot = region_->states(sites_)[site];
    SiteState state;
    read_stable(slot.sequence, [&] {
        state.not_after = slot.not_after;
        state.next_attempt = slot.next_attempt;
        state.last_error.assign(slot.error, std::min<uint32_t>(slot.error_length, max_error));
    });
    return state;
}

}  // namespace portico::acme
