// Which responses the filter compresses, and the head rules it applies.
#include <catch2/catch.hpp>

#include "compress/response_rules.hpp"

using namespace portico;
using compress::ResponseFacts;
using compress::Treatment;

TEST_CASE("treatment_for: what is compressed, and what is left alone", "[compress]") {
    const config::CompressConfig defaults;
    auto facts = [] {
        ResponseFacts response;
        response.status = 200;
        response.length = 10000;
        response.content_type = "text/html; charset=utf-8";
        return response;
    };
    CHECK(treatment_for(facts(), defaults, true) == Treatment::compress);
    // A client that accepts nothing we have: the same response, with Vary.
    CHECK(treatment_for(facts(), defaults, false) == Treatment::vary_only);

    SECTION("statuses without a body, or with a part of one") {
        for (int status : {101, 204, 206, 304}) {
            ResponseFacts response = facts();
            response.status = status;
            INFO(status);
            CHECK(treatment_for(response, defaults, true) == Treatment::as_is);
        }
        for (int status : {200, 201, 403, 404, 500}) {
            ResponseFacts response = facts();
            response.status = status;
            CHECK(treatment_for(response, defaults, true) == Treatment::compress);
        }
    }
    SECTION("encoded already") {
        ResponseFacts response = facts();
        response.content_encoding = "gzip";
        CHECK(treatment_for(response, defaults, true) == Treatment::as_is);
        CHECK(treatment_for(response, defaults, false) == Treatment::as_is);
    }
    SECTION("Cache-Control: no-transform, anywhere in the list") {
        for (const char* value : {"no-transform", "public, No-Transform", "max-age=60,no-transform"}) {
            ResponseFacts response = facts();
            response.cache_control = value;
            INFO(value);
            CHECK(treatment_for(response, defaults, true) == Treatment::as_is);
        }
        ResponseFacts response = facts();
        response.cache_control = "public, max-age=60, no-transformx";
        CHECK(treatment_for(response, defaults, true) == Treatment::compress);
    }
    SECTION("min_length counts when the length is known") {
        ResponseFacts response = facts();
        response.length = 255;
        CHECK(treatment_for(response, defaults, true) == Treatment::as_is);
        response.length = 256;
        CHECK(treatment_for(response, defaults, true) == Treatment::compress);
        response.length.reset();  // streamed: it may be long
        CHECK(treatment_for(response, defaults, true) == Treatment::compress);
    }
    SECTION("types") {
        for (const char* type : {"image/png", "application/octet-stream", "", "text", "textual/plain",
                                 "application/javascriptx", "video/mp4"}) {
            ResponseFacts response = facts();
            response.content_type = type;
            INFO(type);
            CHECK(treatment_for(response, defaults, true) == Treatment::as_is);
        }
        for (const char* type : {"text/css", "Text/Event-Stream", "application/json",
                                 "application/javascript; charset=utf-8", " image/svg+xml ;x=y"}) {
            ResponseFacts response = facts();
            response.content_type = type;
            INFO(type);
            CHECK(treatment_for(response, defaults, true) == Treatment::compress);
        }
    }
}

TEST_CASE("type_listed: exact types and type/*", "[compress]") {
    const std::vector<std::string> types{"text/*", "application/json"};
    CHECK(compress::type_listed("text/plain", types));
    CHECK(compress::type_listed("TEXT/PLAIN;charset=utf-8", types));
    CHECK(compress::type_listed("application/json", types));
    CHECK_FALSE(compress::type_listed("text/", types));
    CHECK_FALSE(compress::type_listed("text", types));
    CHECK_FALSE(compress::type_listed("texts/plain", types));
    CHECK_FALSE(compress::type_listed("application/json5", types));
    CHECK_FALSE(compress::type_listed("application/problem+json", types));
}

TEST_CASE("vary_covers_accept_encoding: the name or *, in any member", "[compress]") {
    CHECK(compress::vary_covers_accept_encoding("Accept-Encoding"));
    CHECK(compress::vary_covers_accept_encoding("cookie, accept-encoding"));
    CHECK(compress::vary_covers_accept_encoding("*"));
    CHECK_FALSE(compress::vary_covers_accept_encoding("Cookie"));
    CHECK_FALSE(compress::vary_covers_accept_encoding("Accept-Encodings"));
    CHECK_FALSE(compress::vary_covers_accept_encoding(""));
}
