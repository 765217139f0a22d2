// The literal prefix a rewrite's regex is pre-checked against before RE2
// runs: it must never refuse a path the regex matches.
#include <catch2/catch.hpp>

#include <string>

#include "rules/regex_captures.hpp"

using namespace portico;

// Its own namespace: in a unity build the test files share one translation
// unit, and their helpers (Answer, fake_path...) must not meet.
namespace rules_regex_prefix_test {

TEST_CASE("rules: the required prefix of an anchored pattern", "[rules]") {
    CHECK(rules::required_prefix("^/old/(.*)$") == "/old/");
    CHECK(rules::required_prefix("^/static") == "/static");
    // A quantifier takes the last character, all its bytes.
    CHECK(rules::required_prefix("^/ab?c") == "/a");
    CHECK(rules::required_prefix("^/a*") == "/");
    CHECK(rules::required_prefix("^/x{2}") == "/");
    CHECK(rules::required_prefix("^/\xC3\xA9?") == "/");
    // Escapes, classes and groups end it.
    CHECK(rules::required_prefix("^/a\\.b") == "/a");
    CHECK(rules::required_prefix("^/a[bc]") == "/a");
    CHECK(rules::required_prefix("^/a(?i)B") == "/a");
    // Not anchored, or an alternation: none.
    CHECK(rules::required_prefix("/old/(.*)") == "");
    CHECK(rules::required_prefix("^/old/|/new/") == "");
    CHECK(rules::required_prefix("(?i)^/old") == "");
}

TEST_CASE("rules: the prefix check agrees with the regex", "[rules]") {
    struct Case {
        const char* pattern;
        const char* path;
        bool matches;
    };
    const Case cases[] = {
        {"^/old/(.*)$", "/old/x", true},
        {"^/old/(.*)$", "/hello", false},
        {"^/old/(.*)$", "/ol", false},
        {"^/ab?c", "/ac", true},
        {"^/ab?c", "/abc", true},
        {"^/\xC3\xA9?x", "/x", true},
        {"^/\xC3\xA9?x", "/\xC3\xA9x", true},
        {"^/old/|/new/", "/a/new/", true},
        {"/old/", "/a/old/", true},
        {"(?i)^/OLD", "/old", true},
        {"^/x{2}", "/xx", true},
        {"^/x{2}", "/x", false},
    };
    for (const Case& c : cases) {
        rules::RegexCaptures regex{std::string(c.pattern)};
        INFO(c.pattern << " on " << c.path);
        CHECK(regex.match(c.path) == c.matches);
    }
}

}  // namespace rules_regex_prefix_test
