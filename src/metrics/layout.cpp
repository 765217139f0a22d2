#include "metrics/layout.hpp"

#include <new>

namespace portico::metrics {

namespace {

constexpr size_t align_up(size_t n, size_t alignment) {
    return (n + alignment - 1) / alignment * alignment;
}

struct Offsets {
    size_t slot_infos, location_names, server_names, upstream_names, limit_names, name_bytes, slots,
        slot_stride, total;
};

Offsets offsets_for(const Capacity& capacity) {
    Offsets o{};
    o.slot_infos = align_up(sizeof(RegionHeader), 64);
    o.location_names = o.slot_infos + align_up(capacity.slots * sizeof(SlotInfo), 64);
    o.server_names = o.location_names + align_up(capacity.locations * sizeof(NameRef), 64);
    o.upstream_names = o.server_names + align_up(capacity.servers * sizeof(ServerName), 64);
    o.limit_names = o.upstream_names + align_up(capacity.upstreams * sizeof(NameRef), 64);
    o.name_bytes = o.limit_names + align_up(capacity.limits * sizeof(LimitName), 64);
    // Slots start on a page so that a slot's counters are committed only
    // when it is first leased.
    o.slots = align_up(o.name_bytes + capacity.name_bytes, 4096);
    o.slot_stride = sizeof(SlotTotals) + (capacity.locations + 1) * sizeof(LocationCounters) +
                    (capacity.servers + 1) * sizeof(ServerCounters) +
                    (capacity.upstreams + 1) * sizeof(UpstreamCounters) +
                    (capacity.limits + 1) * sizeof(LimitCounters);
    o.total = o.slots + capacity.slots * o.slot_stride;
    return o;
}

}  // namespace

void LocationCounters::clear() {
    for (std::atomic<uint64_t>& counter : responses) counter.store(0, std::memory_order_relaxed);
    for (std::atomic<uint64_t>& counter : access_denied)
        counter.store(0, std::memory_order_relaxed);
    for (std::atomic<uint64_t>& counter : cache) counter.store(0, std::memory_order_relaxed);
    response_bytes.store(0, std::memory_order_relaxed);
    sendfile_bytes.store(0, std::memory_order_relaxed);
    request_duration.clear();
    upstream_duration.clear();
    proxy_overhead.clear();
}

void ServerCounters::clear_totals() {
    requests.store(0, std::memory_order_relaxed);
    connections_opened.store(0, std::memory_order_relaxed);
    connections_reused.store(0, std::memory_order_relaxed);
    for (std::atomic<uint64_t>& counter : errors) counter.store(0, std::memory_order_relaxed);
    connect_time.clear();
}

void UpstreamCounters::clear_totals() {
    queue_timeouts.store(0, std::memory_order_relaxed);
}

size_t Region::bytes_needed(const Capacity& capacity) {
    return offsets_for(capacity).total;
}

Region Region::build(void* base, const Capacity& capacity) {
    Offsets o = offsets_for(capacity);
    char* bytes = static_cast<char*>(base);
    Region region;
    region.capacity_ = capacity;
    region.header_ = new (bytes) RegionHeader();
    region.slot_infos_ = reinterpret_cast<SlotInfo*>(bytes + o.slot_infos);
    for (unsigned i = 0; i < capacity.slots; ++i) new (&region.slot_infos_[i]) SlotInfo();
    region.location_names_ = reinterpret_cast<NameRef*>(bytes + o.location_names);
    for (uint32_t i = 0; i < capacity.locations; ++i) new (&region.location_names_[i]) NameRef();
    region.server_names_ = reinterpret_cast<ServerName*>(bytes + o.server_names);
    for (uint32_t i = 0; i < capacity.servers; ++i) new (&region.server_names_[i]) ServerName();
    region.upstream_names_ = reinterpret_cast<NameRef*>(bytes + o.upstream_names);
    for (uint32_t i = 0; i < capacity.upstreams; ++i) new (&region.upstream_names_[i]) NameRef();
    region.limit_names_ = reinterpret_cast<LimitName*>(bytes + o.limit_names);
    for (uint32_t i = 0; i < capacity.limits; ++i) new (&region.limit_names_[i]) LimitName();
    region.name_bytes_ = bytes + o.name_bytes;
    region.slots_ = bytes + o.slots;
    region.slot_stride_ = o.slot_stride;
    return region;
}

void Region::build_slot(unsigned slot) {
    new (&totals(slot)) SlotTotals();
    LocationCounters* location = locations(slot);
    for (uint32_t i = 0; i <= capacity_.locations; ++i) new (&location[i]) LocationCounters();
    ServerCounters* server = servers(slot);
    for (uint32_t i = 0; i <= capacity_.servers; ++i) new (&server[i]) ServerCounters();
    UpstreamCounters* upstream = upstreams(slot);
    for (uint32_t i = 0; i <= capacity_.upstreams; ++i) new (&upstream[i]) UpstreamCounters();
    LimitCounters* limit = limits(slot);
    for (uint32_t i = 0; i <= capacity_.limits; ++i) new (&limit[i]) LimitCounters();
}

SlotTotals& Region::totals(unsigned slot) const {
    return *reinterpret_cast<SlotTotals*>(slots_ + slot * slot_stride_);
}

LocationCounters* Region::locations(unsigned slot) const {
    return reinterpret_cast<LocationCounters*>(slots_ + slot * slot_stride_ + sizeof(SlotTotals));
}

ServerCounters* Region::servers(unsigned slot) const {
    return reinterpret_cast<ServerCounters*>(reinterpret_cast<char*>(locations(slot)) +
                                             (capacity_.locations + 1) * sizeof(LocationCounters));
}

UpstreamCounters* Region::upstreams(unsigned slot) const {
    return reinterpret_cast<UpstreamCounters*>(reinterpret_cast<char*>(servers(slot)) +
                                               (capacity_.servers + 1) * sizeof(ServerCounters));
}

LimitCounters* Region::limits(unsigned slot) const {
    return reinterpret_cast<LimitCounters*>(reinterpret_cast<char*>(upstreams(slot)) +
                                            (capacity_.upstreams + 1) * sizeof(UpstreamCounters));
}

}  // namespace portico::metrics
