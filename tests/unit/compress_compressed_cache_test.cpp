// The compressed cache: found while its source lives, gone with it, and
// bounded by bytes, least recently used first.
#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "compress/compressed_cache.hpp"

using portico::compress::CompressedCache;
using portico::config::Coding;

namespace {

std::shared_ptr<const std::string> bytes_of(size_t size, char fill = 'x') {
    return std::make_shared<const std::string>(size, fill);
}

CompressedCache::Key key_for(const std::shared_ptr<const void>& source, Coding coding = Coding::br,
                             int level = 4) {
    return {source.get(), 0, 1000, coding, level};
}

}  // namespace

TEST_CASE("an entry is found while its source lives, for its coding and level only", "[compress]") {
    CompressedCache cache(1 << 20);
    auto file = std::make_shared<int>(1);
    cache.insert(key_for(file), file, bytes_of(100));
    REQUIRE(cache.find(key_for(file)));
    CHECK(cache.find(key_for(file))->size() == 100);
    CHECK_FALSE(cache.find(key_for(file, Coding::gzip)));
    CHECK_FALSE(cache.find(key_for(file, Coding::br, 5)));
    CompressedCache::Key other_range = key_for(file);
    other_range.position = 10;
    CHECK_FALSE(cache.find(other_range));
}

TEST_CASE("a source that is gone takes its entries with it (a file changed on disk)", "[compress]") {
    CompressedCache cache(1 << 20);
    auto old_file = std::make_shared<int>(1);
    CompressedCache::Key old_key = key_for(old_file);
    cache.insert(old_key, old_file, bytes_of(100));
    auto kept = cache.find(old_key);  // a response still sending it
    old_file.reset();                 // the file cache dropped it
    CHECK_FALSE(cache.find(old_key));
    CHECK(cache.entries() == 0);
    CHECK(cache.bytes() == 0);
    CHECK(kept->size() == 100);  // the response in flight keeps its bytes
    // An entry that expired unseen goes at the next insert.
    auto a = std::make_shared<int>(2);
    auto b = std::make_shared<int>(3);
    cache.insert(key_for(a), a, bytes_of(100));
    a.reset();
    cache.insert(key_for(b), b, bytes_of(100));
    CHECK(cache.entries() == 1);
    CHECK(cache.bytes() == 100);
}

TEST_CASE("the budget evicts the least recently used, and refuses a body too large", "[compress]") {
    CompressedCache cache(8000);  // an entry may take up to 1000
    std::vector<std::shared_ptr<int>> files;
    for (int i = 0; i < 9; ++i) files.push_back(std::make_shared<int>(i));
    for (int i = 0; i < 8; ++i) cache.insert(key_for(files[i]), files[i], bytes_of(1000));
    CHECK(cache.bytes() == 8000);
    REQUIRE(cache.find(key_for(files[0])));  // now the most recently used
    cache.insert(key_for(files[8]), files[8], bytes_of(1000));
    CHECK(cache.bytes() == 8000);
    CHECK(cache.find(key_for(files[0])));
    CHECK_FALSE(cache.find(key_for(files[1])));  // the least recently used went
    CHECK(cache.find(key_for(files[8])));

    auto big = std::make_shared<int>(99);
    cache.insert(key_for(big), big, bytes_of(1001));
    CHECK_FALSE(cache.find(key_for(big)));
    CHECK(cache.entries() == 8);
}

TEST_CASE("inserting a key again replaces its bytes", "[compress]") {
    CompressedCache cache(1 << 20);
    auto file = std::make_shared<int>(1);
    cache.insert(key_for(file), file, bytes_of(100, 'a'));
    cache.insert(key_for(file), file, bytes_of(50, 'b'));
    CHECK(cache.entries() == 1);
    CHECK(cache.bytes() == 50);
    CHECK(*cache.find(key_for(file)) == std::string(50, 'b'));
}
