// The rewrite step against a fake exchange: what each flag does to the
// request (path, query, uri_changed) and what it answers.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "config/config.hpp"
#include "config/sections.hpp"
#include "fake_exchange.hpp"
#include "rules/rewrite_step.hpp"

using namespace portico;
using portico::test::FakeExchange;

// Its own namespace: in a unity build the test files share one translation
// unit, and their helpers (Answer, fake_path...) must not meet.
namespace rules_rewrite_step_test {

namespace {

config::RewriteRule rule(const std::string& from, const std::string& to, config::RewriteFlag flag) {
    config::RewriteRule made;
    made.from = from;
    made.flag = flag;
    config::TemplateError error;
    REQUIRE(config::compile_template(to, config::capture_scope(from), made.to, error));
    return made;
}

// A request for `path` (normalized already) with `query`.
struct Target {
    std::string query_text;
    http::Request request;
    Target(const std::string& path, const std::string& query) : query_text(query) {
        request.normalized_path = path;
        request.query = query_text;
    }
};

}  // namespace

TEST_CASE("rules: the rewrite step, flag by flag", "[rules]") {
    using config::RewriteFlag;
    std::vector<config::RewriteRule> rules{
        rule("^/old/(.*)$", "/new/$1?a=1", RewriteFlag::last),
        rule("^/keep/(.*)$", "/kept/$1", RewriteFlag::break_),
        rule("^/bad/(.*)$", "nowhere/$1", RewriteFlag::last),
    };
    rules::RewriteStep step(rules);
    FakeExchange client("GET", "/");

    SECTION("last: a new path and query, and the location is chosen again") {
        Target target("/old/x", "q=1");
        CHECK(step.answer(target.request, client) == http::StepResult::reroute);
        CHECK(target.request.normalized_path == "/new/x");
        CHECK(target.request.query == "a=1&q=1");
        CHECK(target.request.uri_changed);
        CHECK_FALSE(client.status.has_value());
    }
    SECTION("break: the same location goes on with the new path") {
        Target target("/keep/y", "");
        CHECK(step.answer(target.request, client) == http::StepResult::next);
        CHECK(target.request.normalized_path == "/kept/y");
        CHECK(target.request.query.empty());
        CHECK(target.request.uri_changed);
    }
    SECTION("no rule matches: nothing changes") {
        Target target("/other", "q=1");
        CHECK(step.answer(target.request, client) == http::StepResult::next);
        CHECK(target.request.normalized_path == "/other");
        CHECK_FALSE(target.request.uri_changed);
    }
    SECTION("a result that is no path: 500") {
        Target target("/bad/z", "");
        CHECK(step.answer(target.request, client) == http::StepResult::answered);
        CHECK(client.status == std::optional<int>(500));
    }
}

}  // namespace rules_rewrite_step_test
