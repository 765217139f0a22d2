// The keys of compressed variants (cache/variant_stream.hpp): one per
// identity object and coding, never an identity's, and dropped together
// when a new identity object is stored.
#include <catch2/catch.hpp>

#include <array>
#include <string>
#include <vector>

#include "cache/store.hpp"
#include "cache/variant_stream.hpp"

using portico::cache::coded_key;
using portico::cache::drop_coded_variants;
using portico::cache::hash_key;
using portico::cache::KeyHash;
using portico::cache::ObjectFacts;
using portico::cache::ReadObject;
using portico::cache::Store;
using portico::config::Coding;

namespace {

bool put(Store& store, KeyHash key, const std::string& text) {
    ObjectFacts facts;
    facts.status = 200;
    facts.key_bytes = static_cast<uint32_t>(text.size());
    std::array<std::string_view, 1> parts = {text};
    return store.insert(key, facts, parts);
}

bool holds(Store& store, KeyHash key) {
    ReadObject found;
    return store.find(key, found, nullptr);
}

}  // namespace

TEST_CASE("cache variant keys: one per identity and coding, apart from every key",
          "[cache][variants]") {
    KeyHash page = hash_key("httpexample.com/page");
    KeyHash other = hash_key("httpexample.com/other");
    CHECK(coded_key(page, Coding::gzip) == coded_key(page, Coding::gzip));
    CHECK(!(coded_key(page, Coding::gzip) == coded_key(page, Coding::br)));
    CHECK(!(coded_key(page, Coding::br) == coded_key(page, Coding::zstd)));
    CHECK(!(coded_key(page, Coding::gzip) == coded_key(other, Coding::gzip)));
    CHECK(!(coded_key(page, Coding::gzip) == page));
}

TEST_CASE("cache variant keys: a new identity drops its variants, and only them",
          "[cache][variants]") {
    std::vector<char> memory(256 * 1024);
    Store& store = *Store::create(memory.data(), memory.size());
    KeyHash page = hash_key("page");
    KeyHash other = hash_key("other");
    REQUIRE(put(store, page, "page"));
    REQUIRE(put(store, other, "other"));
    for (Coding coding : {Coding::gzip, Coding::br, Coding::zstd}) {
        REQUIRE(put(store, coded_key(page, coding), "page"));
        REQUIRE(put(store, coded_key(other, coding), "other"));
    }
    CHECK(store.objects() == 8);
    drop_coded_variants(store, page);
    CHECK(store.objects() == 5);
    CHECK(holds(store, page));
    CHECK(!holds(store, coded_key(page, Coding::gzip)));
    CHECK(!holds(store, coded_key(page, Coding::br)));
    CHECK(holds(store, coded_key(other, Coding::zstd)));
    store.erase(other);
    CHECK(!holds(store, other));
    store.erase(other);  // absent: nothing happens
    CHECK(store.objects() == 4);
}
