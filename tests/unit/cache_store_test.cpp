// The response cache's shared store (cache/store.hpp): objects found by key,
// replaced, evicted least recently used first within the zone's memory,
// removed by key text, never larger than the zone allows; the fill locks.
#include <catch2/catch.hpp>

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "cache/store.hpp"

using portico::cache::hash_key;
using portico::cache::ObjectFacts;
using portico::cache::ReadObject;
using portico::cache::Store;

namespace {

struct Zone {
    explicit Zone(size_t bytes) : memory(bytes), store(Store::create(memory.data(), bytes)) {}
    std::vector<char> memory;
    Store* store;
};

bool put(Store& store, const std::string& key, const std::string& body) {
    ObjectFacts facts;
    facts.status = 200;
    facts.key_bytes = static_cast<uint32_t>(key.size());
    facts.head_bytes = 0;
    facts.body_bytes = body.size();
    std::array<std::string_view, 2> parts = {key, body};
    return store.insert(hash_key(key), facts, parts);
}

// The body stored under `key`, or "(none)".
std::string body_of(Store& store, const std::string& key) {
    ReadObject found;
    std::string bytes;
    if (!store.find(hash_key(key), found, &bytes)) return "(none)";
    return bytes.substr(found.facts.key_bytes + found.facts.head_bytes);
}

}  // namespace

TEST_CASE("cache store: an object is found by its key, and replaced", "[cache][store]") {
    Zone zone(256 * 1024);
    Store& store = *zone.store;
    CHECK(body_of(store, "a") == "(none)");
    REQUIRE(put(store, "a", "first"));
    CHECK(body_of(store, "a") == "first");
    std::string big(10000, 'x');  // three blocks
    REQUIRE(put(store, "a", big));
    CHECK(body_of(store, "a") == big);
    CHECK(store.objects() == 1);
    CHECK(store.bytes_held() == 3 * Store::block_bytes);
    ReadObject first;
    ReadObject again;
    REQUIRE(store.find(hash_key("a"), first, nullptr));
    REQUIRE(put(store, "a", "third"));
    REQUIRE(store.find(hash_key("a"), again, nullptr));
    // A replaced object is a new generation: no worker's copy of the old
    // one is taken for it.
    CHECK((again.entry != first.entry || again.generation != first.generation));
}

TEST_CASE("cache store: the least recently used go first, the zone never overflows",
          "[cache][store]") {
    Zone zone(256 * 1024);
    Store& store = *zone.store;
    uint64_t capacity = store.capacity_bytes();
    REQUIRE(capacity <= 256 * 1024);
    std::string body(3000, 'b');
    REQUIRE(put(store, "keep", body));
    for (int i = 0; i < 500; ++i) {
        REQUIRE(put(store, "key" + std::to_string(i), body));
        CHECK(body_of(store, "keep") == body);  // used again: never the oldest
        REQUIRE(store.bytes_held() <= capacity);
    }
    CHECK(body_of(store, "key0") == "(none)");
    CHECK(body_of(store, "key499") == body);
    CHECK(store.objects() == capacity / Store::block_bytes);
}

TEST_CASE("cache store: an object larger than a quarter of the zone is refused", "[cache][store]") {
    Zone zone(256 * 1024);
    Store& store = *zone.store;
    REQUIRE(put(store, "small", "s"));
    CHECK_FALSE(put(store, "huge", std::string(store.max_object_bytes() + 1, 'h')));
    CHECK(body_of(store, "small") == "s");  // nothing evicted for it
    CHECK(put(store, "fits", std::string(store.max_object_bytes() - 8, 'f')));
}

TEST_CASE("cache store: objects removed by key or prefix of their key text", "[cache][store]") {
    Zone zone(256 * 1024);
    Store& store = *zone.store;
    std::string long_key = "http://x/" + std::string(5000, 'k');  // spans two blocks
    for (const std::string& key : {std::string("http://x/a"), std::string("http://x/a/b"),
                                   std::string("http://y/a"), long_key})
        REQUIRE(put(store, key, "body"));
    CHECK(store.remove_if([](std::string_view key) { return key == "http://x/a"; }) == 1);
    CHECK(body_of(store, "http://x/a") == "(none)");
    CHECK(body_of(store, "http://x/a/b") == "body");
    CHECK(store.remove_if([](std::string_view key) { return key.starts_with("http://x/"); }) == 2);
    CHECK(body_of(store, long_key) == "(none)");
    CHECK(body_of(store, "http://y/a") == "body");
    CHECK(store.objects() == 1);
    // The freed blocks are used again.
    for (int i = 0; i < 200; ++i) REQUIRE(put(store, "again" + std::to_string(i), "x"));
}

TEST_CASE("cache store: one fill lock per key, until unlocked or expired", "[cache][store]") {
    Zone zone(256 * 1024);
    Store& store = *zone.store;
    auto key = hash_key("k");
    CHECK(store.try_lock(key, 1000, 50));
    CHECK(store.locked(key, 1000));
    CHECK_FALSE(store.try_lock(key, 1010, 50));
    CHECK(store.try_lock(hash_key("other"), 1010, 50));
    CHECK_FALSE(store.locked(key, 1050));  // expired: a worker that died frees it
    CHECK(store.try_lock(key, 1050, 50));
    store.unlock(key);
    CHECK_FALSE(store.locked(key, 1051));
    CHECK(store.try_lock(key, 1051, 50));
}
