// The [acme] storage folder: the account key and, per site, its chain and
// key, each written 0600 by the ACME process (under a temporary name, then
// renamed, so a reader never sees half a file).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace portico::acme {

std::optional<std::string> read_stored(const std::string& path);
// false with `error` set when it could not be written.
bool write_stored(const std::string& path, std::string_view text, std::string& error);

}  // namespace portico::acme
