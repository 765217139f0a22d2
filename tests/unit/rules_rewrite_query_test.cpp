// What a rewrite does to the query (nginx): kept after a result without
// '?', after the result's own arguments, dropped after a trailing '?'.
#include <catch2/catch.hpp>

#include "rules/rewrite_step.hpp"

using portico::rules::query_after_rewrite;

// Its own namespace: in a unity build the test files share one translation
// unit, and their helpers (Answer, fake_path...) must not meet.
namespace rules_rewrite_query_test {

TEST_CASE("rules: the query after a rewrite", "[rules]") {
    struct Case {
        const char* own;
        bool has_question;
        const char* original;
        const char* expected;
    };
    const Case cases[] = {
        {"", false, "q=1", "q=1"},        // "/new": kept
        {"", false, "", ""},              // nothing to keep
        {"a=1", true, "q=1", "a=1&q=1"},  // "/new?a=1": after the result's own
        {"a=1", true, "", "a=1"},
        {"", true, "q=1", ""},  // "/new?": dropped
    };
    for (const Case& c : cases) {
        INFO(c.own << " " << c.has_question << " " << c.original);
        std::string out = "left over";
        query_after_rewrite(c.own, c.has_question, c.original, out);
        CHECK(out == c.expected);
    }
}

}  // namespace rules_rewrite_query_test
