// The pieces of the limits apart from a server: the shared key table (its
// least-recently-seen eviction) and the leaky bucket's arithmetic against
// nginx's numbers.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "access/key_table.hpp"
#include "access/rate_limit.hpp"
#include "core/shared_memory.hpp"

using portico::access::KeyEntry;
using portico::access::KeyTable;
using portico::access::LeakyBucket;

namespace access_limits_test {

namespace {

struct Table {
    explicit Table(size_t entries) : memory(KeyTable::bytes_for(entries)) {
        table = KeyTable::create(memory.data(), memory.size(), 1234);
    }
    std::vector<char> memory;
    KeyTable* table;
};

}  // namespace

TEST_CASE("a full key table gives up its least recently seen key", "[access][limits]") {
    Table made(16);
    KeyTable& table = *made.table;
    REQUIRE(table.capacity() >= 16);
    size_t capacity = table.capacity();
    bool added = false;
    for (uint64_t key = 1; key <= capacity; ++key) {
        KeyEntry* entry = table.find_or_add(key, true, added);
        REQUIRE(entry != nullptr);
        CHECK(added);
        entry->first = key * 10;
    }
    CHECK(table.size() == capacity);
    // Key 1 is seen again: key 2 is now the oldest.
    REQUIRE(table.find(1) != nullptr);
    CHECK(table.find(1)->first == 10);
    KeyEntry* newcomer = table.find_or_add(capacity + 1, true, added);
    REQUIRE(newcomer != nullptr);
    CHECK(added);
    CHECK(newcomer->first == 0);
    CHECK(table.find(2) == nullptr);
    CHECK(table.find(1) != nullptr);
    CHECK(table.find(3) != nullptr);
    CHECK(table.size() == capacity);
    // Without eviction a full table answers nullptr; a removed key frees room.
    CHECK(table.find_or_add(capacity + 2, false, added) == nullptr);
    table.remove(*table.find(3));
    CHECK(table.find(3) == nullptr);
    CHECK(table.find_or_add(capacity + 2, false, added) != nullptr);
    CHECK(added);
}

TEST_CASE("the leaky bucket counts as nginx's limit_req", "[access][limits]") {
    // rate=10r/s burst=5 delay=2
    LeakyBucket bucket{.rate_milli = 10'000, .burst_milli = 5'000, .delay_milli = 2'000};
    // Requests exactly at the rate keep the excess at 0 (times in ms).
    CHECK(bucket.excess_now(0, 0, 100) == 0);
    // One at once after another: one over.
    CHECK(bucket.excess_now(0, 1'000, 1'000) == 1'000);
    // Half the interval later: half drained.
    CHECK(bucket.excess_now(3'000, 0, 50) == 3'500);
    // A long pause drains everything, however long.
    CHECK(bucket.excess_now(5'000, 0, 3'600'000'000'000) == 0);
    // A clock that went back drains nothing.
    CHECK(bucket.excess_now(1'000, 500, 100) == 2'000);
    // Up to delay: at once; beyond: the time to drain back to delay.
    CHECK(bucket.wait_ms(2'000) == 0);
    CHECK(bucket.wait_ms(3'000) == 100);
    CHECK(bucket.wait_ms(5'000) == 300);
}

TEST_CASE("below the leaky bucket's waits_from no request waits, from it one does",
          "[access][limits]") {
    // Rates that divide 1000 evenly and not, slow and fast, with and without delay.
    for (uint64_t rate_milli :
         {1ull, 100ull, 999ull, 1'000ull, 1'001ull, 10'000ull, 16'667ull, 1'000'000'000ull}) {
        for (uint64_t delay_milli : {0ull, 2'000ull}) {
            LeakyBucket bucket{
                .rate_milli = rate_milli, .burst_milli = 1ull << 40, .delay_milli = delay_milli};
            uint64_t from = bucket.waits_from();
            CAPTURE(rate_milli, delay_milli, from);
            CHECK(bucket.wait_ms(from - 1) == 0);
            CHECK(bucket.wait_ms(from) >= 1);
        }
    }
}

TEST_CASE("a shared lock whose owner died is taken over, not waited for forever",
          "[access][limits]") {
    std::string error;
    auto memory = portico::core::SharedMemory::map(4096, error);
    REQUIRE(memory);
    auto* mutex = new (memory->data()) portico::core::SharedMutex();
    mutex->init();
    pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        mutex->lock();  // and dies holding it, as a killed worker would
        _exit(0);
    }
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    mutex->lock();  // returns: the dead owner's lock is ours now
    mutex->unlock();
    mutex->lock();
    mutex->unlock();
}

}  // namespace access_limits_test
