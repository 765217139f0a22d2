#include "router/router.hpp"

#include <re2/re2.h>

#include <algorithm>

namespace portico::router {

namespace {

std::unique_ptr<re2::RE2> compile_regex(const std::string& pattern) {
    re2::RE2::Options options;
    // The config loader already reported bad patterns with file positions;
    // RE2's own stderr logging would only duplicate them.
    options.set_log_errors(false);
    auto re = std::make_unique<re2::RE2>(pattern, options);
    if (!re->ok()) {
        return nullptr;
    }
    return re;
}

}  // namespace

Router::Router(const std::vector<config::LocationConfig>& locations,
               const std::vector<size_t>& indices) {
    for (size_t i : indices) {
        const config::LocationConfig& location = locations[i];
        const int index = static_cast<int>(i);
        switch (location.match) {
        case config::MatchKind::exact:
            // emplace keeps the existing entry: the first duplicate in file
            // order wins, as in nginx.
            exact_.emplace(location.pattern, index);
            break;
        case config::MatchKind::prefix:
            prefixes_.push_back({location.pattern, index, location.stop_regex});
            break;
        case config::MatchKind::regex:
            if (auto re = compile_regex(location.pattern)) {
                regexes_.push_back({std::move(re), index});
            }
            break;
        }
    }
    // Stable, so among equal prefixes the first in file order is met first.
    std::stable_sort(prefixes_.begin(), prefixes_.end(), [](const Prefix& a, const Prefix& b) {
        return a.text.size() > b.text.size();
    });
}

Router::~Router() = default;

int Router::match(std::string_view path) const {
    if (const auto exact = exact_.find(path); exact != exact_.end()) {
        return exact->second;
    }
    // A byte-prefix test, as nginx does: "/images" also matches "/images123".
    // Longest first, so the first hit is the longest match.
    const auto longest = std::find_if(prefixes_.begin(), prefixes_.end(), [path](const Prefix& p) {
        return path.starts_with(p.text);
    });
    const bool has_prefix = longest != prefixes_.end();
    if (has_prefix && longest->stop_regex) {
        return longest->index;
    }
    for (const Regex& regex : regexes_) {
        // Unanchored, like nginx's "~": the pattern anchors itself if it wants.
        if (re2::RE2::PartialMatch(path, *regex.re)) {
            return regex.index;
        }
    }
    return has_prefix ? longest->index : -1;
}

}  // namespace portico::router
