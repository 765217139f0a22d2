// The response cache's disk tier, its pieces without files: the index
// (cache/disk_index.hpp: found, replaced, removed amid collisions, the least
// recently used given back over max_size or the slots, the loader's claim)
// and the file format (cache/disk_file.hpp: names, a round trip, and the
// truncated, corrupt or misplaced file refused).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "cache/disk_file.hpp"
#include "cache/disk_index.hpp"

using portico::cache::check_disk_header;
using portico::cache::check_disk_object;
using portico::cache::disk_folder;
using portico::cache::disk_name;
using portico::cache::DiskHeader;
using portico::cache::DiskIndex;
using portico::cache::encode_disk_object;
using portico::cache::hash_key;
using portico::cache::key_of_name;
using portico::cache::KeyHash;
using portico::cache::ObjectFacts;

namespace cache_disk_unit_test {

namespace {

struct Index {
    explicit Index(uint64_t max_bytes, size_t slots = 1024)
        : memory(DiskIndex::bytes_for(slots)),
          index(DiskIndex::create(memory.data(), slots, max_bytes)) {}
    std::vector<uint64_t> memory;  // 8-byte aligned
    DiskIndex* index;
    std::vector<KeyHash> add(KeyHash key, uint64_t bytes, int64_t used_ms) {
        std::vector<KeyHash> evicted;
        index->add({key, key, bytes, used_ms, true}, false, evicted);
        return evicted;
    }
};

// Keys that all land in slot 5 of a 1024-slot table.
KeyHash colliding(uint64_t n) {
    return {5 + (n << 20), n};
}

}  // namespace

TEST_CASE("disk index: slots by max_size, within bounds", "[cache-disk]") {
    CHECK(DiskIndex::slots_for(1024 * 1024) == 1024);
    CHECK(DiskIndex::slots_for(uint64_t{10} << 30) == 512 * 1024);
    CHECK(DiskIndex::slots_for(0) == 64 * 1024);
    CHECK(DiskIndex::slots_for(uint64_t{100} << 20) == 16384);
}

TEST_CASE("disk index: colliding keys found, replaced and removed", "[cache-disk]") {
    Index table(0);
    for (uint64_t n = 0; n < 10; ++n) table.add(colliding(n), 100, 1);
    CHECK(table.index->objects() == 10);
    CHECK(table.index->bytes() == 1000);
    table.add(colliding(3), 50, 2);  // replaced, not added
    CHECK(table.index->objects() == 10);
    CHECK(table.index->bytes() == 950);
    // Removing from the middle of the run keeps the later ones reachable.
    CHECK(table.index->remove(colliding(2)));
    CHECK(table.index->remove(colliding(5)));
    CHECK(!table.index->remove(colliding(5)));
    for (uint64_t n = 0; n < 10; ++n) CHECK(table.index->holds(colliding(n)) == (n != 2 && n != 5));
    CHECK(table.index->objects() == 8);
    CHECK(table.index->bytes() == 750);
    CHECK(!table.index->holds(colliding(11)));
}

TEST_CASE("disk index: over max_size, the least recently used go", "[cache-disk]") {
    Index table(1000);
    for (int n = 0; n < 10; ++n)
        CHECK(table.add(hash_key(std::to_string(n)), 100, 100 + n).empty());
    table.index->touch(hash_key("0"), 500);  // used again: now the newest
    std::vector<KeyHash> evicted = table.add(hash_key("new"), 250, 600);
    // 1250 bytes: the three least recently used (1, 2, 3) make room.
    REQUIRE(evicted.size() == 3);
    CHECK(evicted[0] == hash_key("1"));
    CHECK(evicted[1] == hash_key("2"));
    CHECK(evicted[2] == hash_key("3"));
    CHECK(table.index->bytes() == 950);
    CHECK(table.index->holds(hash_key("0")));
    CHECK(!table.index->holds(hash_key("1")));
}

TEST_CASE("disk index: at most three quarters of the slots", "[cache-disk]") {
    Index table(0);
    std::vector<KeyHash> evicted;
    for (int n = 0; n < 800; ++n) {
        std::vector<KeyHash> out = table.add(hash_key(std::to_string(n)), 1, n);
        evicted.insert(evicted.end(), out.begin(), out.end());
    }
    CHECK(table.index->objects() == 768);
    REQUIRE(evicted.size() == 32);
    CHECK(evicted.front() == hash_key("0"));
    CHECK(table.index->holds(hash_key("799")));
}

TEST_CASE("disk index: the loader keeps newer entries, select finds by base", "[cache-disk]") {
    Index table(0);
    std::vector<KeyHash> evicted;
    table.index->add({hash_key("a"), hash_key("a"), 10, 5, true}, false, evicted);
    table.index->add({hash_key("a"), hash_key("a"), 99, 1, true}, true, evicted);
    CHECK(table.index->bytes() == 10);
    table.index->add({hash_key("a-variant"), hash_key("a"), 20, 5, true}, false, evicted);
    table.index->add({hash_key("b"), hash_key("b"), 30, 5, true}, false, evicted);
    std::vector<KeyHash> of_a = table.index->select(
        [](const DiskIndex::Entry& entry) { return entry.base == hash_key("a"); });
    CHECK(of_a.size() == 2);
    CHECK(std::find(of_a.begin(), of_a.end(), hash_key("a-variant")) != of_a.end());
}

TEST_CASE("disk index: one loader, marked done", "[cache-disk]") {
    Index table(0);
    CHECK(!table.index->loaded());
    CHECK(table.index->claim_loading(getpid()));
    CHECK(!table.index->claim_loading(getppid()));  // the claimant is alive
    table.index->finish_loading();
    CHECK(table.index->loaded());
    CHECK(!table.index->claim_loading(getpid()));
}

TEST_CASE("disk file: names spell the key, folders its last digits", "[cache-disk]") {
    KeyHash key{0x0123456789abcdefULL, 0xfedcba9876543210ULL};
    CHECK(disk_name(key) == "fedcba98765432100123456789abcdef");
    CHECK(disk_folder(key) == "ef/cd");
    REQUIRE(key_of_name(disk_name(key)));
    CHECK(*key_of_name(disk_name(key)) == key);
    CHECK(!key_of_name("fedcba98765432100123456789abcde"));
    CHECK(!key_of_name("fedcba98765432100123456789abcdeX"));
    CHECK(!key_of_name("FEDCBA98765432100123456789ABCDEF"));
}

TEST_CASE("disk file: a round trip, and what is refused", "[cache-disk]") {
    std::string key = "httpexample.com/page";
    std::string head = "content-type\ntext/plain\n";
    std::string body = "the body";
    ObjectFacts facts;
    facts.status = 200;
    facts.stored_at = 1700000000;
    facts.lifetime = 60;
    facts.key_bytes = static_cast<uint32_t>(key.size());
    facts.head_bytes = static_cast<uint32_t>(head.size());
    facts.body_bytes = body.size();
    KeyHash hash = hash_key(key);
    std::array<std::string_view, 3> parts = {key, head, body};
    std::string file = encode_disk_object(hash, hash, facts, parts);
    REQUIRE(file.size() == sizeof(DiskHeader) + key.size() + head.size() + body.size());

    auto read = check_disk_object(file, hash);
    REQUIRE(read);
    CHECK(read->facts.status == 200);
    CHECK(read->facts.lifetime == 60);
    CHECK(read->facts.stored_at == 1700000000);
    CHECK(file.substr(sizeof(DiskHeader)) == key + head + body);
    CHECK(check_disk_header(file.substr(0, sizeof(DiskHeader)), file.size(), hash));

    CHECK(!check_disk_object(file.substr(0, file.size() - 1), hash));  // truncated
    CHECK(!check_disk_header(file, file.size() + 1, hash));            // longer
    CHECK(!check_disk_object(file, hash_key("another key")));          // misplaced
    std::string corrupt = file;
    corrupt.back() ^= 1;
    CHECK(!check_disk_object(corrupt, hash));
    CHECK(check_disk_header(corrupt, corrupt.size(), hash));  // the loader reads headers only
    std::string other_layout = file;
    other_layout[8] = 2;
    CHECK(!check_disk_header(other_layout, other_layout.size(), hash));
    CHECK(!check_disk_header("short", 5, hash));
}

}  // namespace cache_disk_unit_test
