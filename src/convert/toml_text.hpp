// TOML values as text, for the config `portico convert` writes.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace portico::convert {

// A basic string, "..." with TOML's escapes.
std::string toml_string(std::string_view text);
// A literal string '...' when the text allows one (a regex reads as
// written), else a basic string.
std::string toml_literal(std::string_view text);
// A bare key when the name allows one, else a quoted key.
std::string toml_key(std::string_view name);
// ["a", "b"]
std::string toml_string_array(const std::vector<std::string>& texts);
// { key = value, ... } from values already rendered.
std::string toml_inline_table(const std::vector<std::pair<std::string, std::string>>& entries);

}  // namespace portico::convert
