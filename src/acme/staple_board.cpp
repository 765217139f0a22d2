#include "acme/staple_board.hpp"

#include <algorithm>
#include <atomic>
#include <new>

#include "acme/sequence_lock.hpp"

namespace portico::acme {

struct StapleBoard::Slot {
    std::atomic<uint64_t> sequence{0};  // 0: nothing published yet
    tls::CertificateDigest certificate{};
    int64_t this_update = 0;
    int64_t next_update = 0;
    int64_t next_fetch = 0;
    uint32_t response_length = 0;
    uint32_t status_length = 0;
    uint32_t error_length = 0;
    char status[max_status];
    char error[max_error];
    char response[max_response];
};

std::unique_ptr<StapleBoard> StapleBoard::create(size_t slots, std::string& error) {
    std::unique_ptr<core::SharedMemory> memory =
        core::SharedMemory::map(std::max<size_t>(slots, 1) * sizeof(Slot), error);
    if (!memory) return nullptr;
    auto* first = static_cast<Slot*>(memory->data());
    for (size_t slot = 0; slot < slots; ++slot) new (first + slot) Slot();
    return std::unique_ptr<StapleBoard>(new StapleBoard(std::move(memory), first, slots));
}

StapleBoard::~StapleBoard() = default;

void StapleBoard::publish(size_t slot, const Staple& staple) {
    Slot& to = slots_at_[slot];
    Writing writing(to.sequence);
    to.certificate = staple.certificate;
    to.this_update = staple.this_update;
    to.next_update = staple.next_update;
    to.next_fetch = staple.next_fetch;
    bool fits = staple.response.size() <= max_response;
    to.response_length =
        fits ? static_cast<uint32_t>(copy_in(to.response, max_response, staple.response)) : 0;
    to.status_length = static_cast<uint32_t>(copy_in(to.status, max_status, staple.status));
    to.error_length = static_cast<uint32_t>(copy_in(to.error, max_error, staple.last_error));
}

uint64_t StapleBoard::version(size_t slot) const {
    return slots_at_[slot].sequence.load(std::memory_order_acquire);
}

bool StapleBoard::read(size_t slot, std::string& response, tls::CertificateDigest& certificate,
                       int64_t& next_update, uint64_t& version) const {
    const Slot& from = slots_at_[slot];
    version = read_stable(from.sequence, [&] {
        certificate = from.certificate;
        next_update = from.next_update;
        response.assign(from.response, std::min<uint32_t>(from.response_length, max_response));
    });
    return version != 0 && !response.empty();
}

Staple StapleBoard::state(size_t slot) const {
    const Slot& from = slots_at_[slot];
    Staple staple;
    read_stable(from.sequence, [&] {
        staple.certificate = from.certificate;
        staple.this_update = from.this_update;
        staple.next_update = from.next_update;
        staple.next_fetch = from.next_fetch;
        staple.status.assign(from.status, std::min<uint32_t>(from.status_length, max_status));
        staple.last_error.assign(from.error, std::min<uint32_t>(from.error_length, max_error));
    });
    return staple;
}

}  // namespace portico::acme
