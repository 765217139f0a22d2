#include "http/location_captures.hpp"

#include <re2/re2.h>

#include <algorithm>

namespace portico::http {

bool uses_captures(std::span<const config::HeaderRule> rules) {
    return std::any_of(rules.begin(), rules.end(), [](const config::HeaderRule& rule) {
        return rule.value.uses(config::Variable::capture);
    });
}

LocationCaptures::LocationCaptures(const config::LocationConfig& location, bool needed) {
    if (!needed || location.match != config::MatchKind::regex) return;
    re2::RE2::Options options;
    options.set_log_errors(false);  // the config loader reported a bad pattern
    regex_ = std::make_unique<re2::RE2>(location.pattern, options);
    if (!regex_->ok()) {
        regex_.reset();
        return;
    }
    size_t groups = static_cast<size_t>(regex_->NumberOfCapturingGroups()) + 1;
    pieces_.resize(groups);
    captures_.resize(groups);
}

LocationCaptures::~LocationCaptures() = default;

Captures LocationCaptures::match(const Request& request) {
    if (!regex_) return {};
    const std::string& path = request.normalized_path;
    // Unanchored, as the router matched it. A path that no longer matches
    // (a rewrite's `break` changed it) has no captures.
    if (!regex_->Match(path, 0, path.size(), re2::RE2::UNANCHORED, pieces_.data(),
                       static_cast<int>(pieces_.size())))
        return {};
    for (size_t i = 0; i < pieces_.size(); ++i)
        captures_[i] = pieces_[i].data() ? std::string_view(pieces_[i].data(), pieces_[i].size())
                                         : std::string_view{};
    return captures_;
}

}  // namespace portico::http
