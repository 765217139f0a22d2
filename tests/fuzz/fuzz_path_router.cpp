// Path normalization and location matching, on any target: normalization
// either refuses the path or yields one that starts with '/', has no empty,
// "." or ".." segment and no NUL, and matching it never fails or escapes the
// location list. Normalizing twice changes nothing more (decoding happens
// once: a second pass may only decode what the first produced from %25).
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "fuzz_support.hpp"
#include "router/path.hpp"
#include "router/router.hpp"

using namespace portico;

namespace {

config::LocationConfig location(config::MatchKind kind, std::string pattern, bool stop_regex = false) {
    config::LocationConfig result;
    result.match = kind;
    result.pattern = std::move(pattern);
    result.name = result.pattern;
    result.stop_regex = stop_regex;
    return result;
}

// The shapes of the shipped configs and the spec's examples.
const std::vector<config::LocationConfig>& locations() {
    static const std::vector<config::LocationConfig> list = {
        location(config::MatchKind::exact, "/health"),
        location(config::MatchKind::prefix, "/"),
        location(config::MatchKind::prefix, "/static/", true),
        location(config::MatchKind::prefix, "/api"),
        location(config::MatchKind::regex, R"(\.(html|css|js|jpg|png|svg|ico|woff2?)$)"),
        location(config::MatchKind::regex, R"((?i)^/images/.*\.webp$)"),
    };
    return list;
}

// Every location of the list, as one site's.
const std::vector<size_t>& all_of_them() {
    static const std::vector<size_t> indices = [] {
        std::vector<size_t> all(locations().size());
        for (size_t i = 0; i < all.size(); ++i) all[i] = i;
        return all;
    }();
    return indices;
}

void check_normalized(const std::string& path) {
    FUZZ_CHECK(!path.empty() && path.front() == '/');
    FUZZ_CHECK(path.find('\0') == std::string::npos);
    FUZZ_CHECK(path.find("//") == std::string::npos);
    FUZZ_CHECK(path.find("/./") == std::string::npos);
    FUZZ_CHECK(path.find("/../") == std::string::npos);
    FUZZ_CHECK(!path.ends_with("/.") && !path.ends_with("/.."));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t length) {
    static const router::Router router(locations(), all_of_them());
    std::string_view raw(reinterpret_cast<const char*>(data), length);
    std::string normalized;
    router::NormalizedPath result = router::normalize_path(raw, normalized);
    if (result.error != router::PathError::none) return 0;
    check_normalized(normalized);
    int index = router.match(normalized);
    FUZZ_CHECK(index >= -1 && index < static_cast<int>(locations().size()));
    // "/" is a prefix of every normalized path: something always matches.
    FUZZ_CHECK(index >= 0);
    return 0;
}
