// nginx's value syntaxes, turned into portico's: times, sizes, regexes
// (which must mean the same under RE2) and variables (which must be ones
// portico expands).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace portico::convert {

// nginx "30", "30s", "1m30s", "500ms", "1d" -> portico "90s" / "500ms".
std::optional<std::string> portico_duration(std::string_view nginx_time);
// The same in whole seconds, for `expires`; nullopt for other forms.
std::optional<long long> nginx_seconds(std::string_view nginx_time);
// nginx "1m", "512k", "100" -> bytes.
std::optional<unsigned long long> nginx_size(std::string_view nginx_size);

// Empty when RE2 compiles `pattern` (an nginx PCRE) to the same meaning;
// else why not (lookaround, backreferences, possessive quantifiers...).
std::string re2_refusal(const std::string& pattern);
// The groups of a regex, for templates that use its captures: count and
// names, "" when there is none.
int regex_group_count(const std::string& pattern);

// Empty when every variable of `value` is one portico expands the same way
// ($1 captures only within `capture_groups`); else why not.
std::string template_refusal(std::string_view value, const std::string& capture_regex = "");

}  // namespace portico::convert
