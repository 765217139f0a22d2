// A rule's regex matched against the request path, with the groups its
// templates read ($1, $name): nginx's captures.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <re2/re2.h>

namespace portico::rules {

class RegexCaptures {
public:
    // `pattern` was checked when the config was read.
    explicit RegexCaptures(const std::string& pattern);

    // Searches `text` (unanchored, as nginx: '^' and '$' anchor); on a match
    // groups() views [0] the whole match and [1].. the groups, into `text`.
    bool match(std::string_view text);
    const std::vector<std::string_view>& groups() const { return groups_; }

private:
    std::unique_ptr<re2::RE2> regex_;
    std::vector<re2::StringPiece> pieces_;
    std::vector<std::string_view> groups_;
};

}  // namespace portico::rules
