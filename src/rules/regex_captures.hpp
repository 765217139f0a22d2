// A rule's regex matched against the request path, with the groups its
// templates read ($1, $name): nginx's captures.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <re2/re2.h>

namespace portico::rules {

// The literal text an anchored pattern requires at the start of the text:
// the characters after a leading '^' up to the first one with a meaning
// (less the last when a quantifier follows it); "" when there is none or
// the pattern has an alternation ('|' may end the anchored branch).
std::string required_prefix(std::string_view pattern);

class RegexCaptures {
public:
    // `pattern` was checked when the config was read.
    explicit RegexCaptures(const std::string& pattern);

    // Searches `text` (unanchored, as nginx: '^' and '$' anchor); on a match
    // groups() views [0] the whole match and [1].. the groups, into `text`.
    bool match(std::string_view text) { return has_required_prefix(text) && match_regex(text); }
    const std::vector<std::string_view>& groups() const { return groups_; }

private:
    // Byte by byte: the prefix is short and most paths differ early, where
    // a call to memcmp would cost more than the loop.
    bool has_required_prefix(std::string_view text) const {
        if (text.size() < required_prefix_.size()) return false;
        for (size_t i = 0; i < required_prefix_.size(); ++i)
            if (text[i] != required_prefix_[i]) return false;
        return true;
    }
    bool match_regex(std::string_view text);

    std::unique_ptr<re2::RE2> regex_;
    // What every match starts with ("^/old/(.*)" -> "/old/"): most paths
    // fail this compare and never reach RE2 (issue 35's cost budget).
    std::string required_prefix_;
    std::vector<re2::StringPiece> pieces_;
    std::vector<std::string_view> groups_;
};

}  // namespace portico::rules
