// The header fields a filter sees (http::HeaderList): copies that stay
// right when the list's text grows, literals kept as views, changes in place.
#include <catch2/catch.hpp>

#include <string>

#include "http/header_list.hpp"

TEST_CASE("header list: copies survive the text growing under them", "[filter]") {
    portico::http::HeaderList fields;
    std::string name = "X-Field-";
    for (int i = 0; i < 200; ++i) {
        std::string value(static_cast<size_t>(i % 50), static_cast<char>('a' + i % 26));
        fields.add(name + std::to_string(i), value);
        name[0] = 'X';  // the caller's buffer changes: the copy must not
    }
    fields.add_lasting("Vary", "Accept-Encoding");
    REQUIRE(fields.size() == 201);
    for (int i = 0; i < 200; ++i) {
        INFO(i);
        CHECK(fields.name(static_cast<size_t>(i)) == "X-Field-" + std::to_string(i));
        CHECK(fields.value(static_cast<size_t>(i)) ==
              std::string(static_cast<size_t>(i % 50), static_cast<char>('a' + i % 26)));
    }
    CHECK(fields.value(200) == "Accept-Encoding");
    CHECK(fields.find("x-field-7") == 7);
    CHECK(fields.find("content-type") == fields.size());
}

TEST_CASE("header list: a value set from the list itself, removals, reuse", "[filter]") {
    portico::http::HeaderList fields;
    fields.add("ETag", "\"v1\"");
    fields.add("Accept-Ranges", "bytes");
    // A value made from one in the list, with the text growing meanwhile.
    for (int i = 0; i < 100; ++i) fields.set_value(0, fields.value(0));
    CHECK(fields.value(0) == "\"v1\"");
    fields.remove(1);
    REQUIRE(fields.size() == 1);
    CHECK(fields.name(0) == "ETag");
    fields.clear();
    CHECK(fields.empty());
    fields.add("Content-Type", "text/html");
    CHECK(fields.value(0) == "text/html");
}
