// Where a location's URIs are on disk: under `root` the whole path, under
// `alias` the part after the matched prefix (nginx's alias), for an exact
// location's alias the file itself. The static handler and try_files map
// through the same one, and share its opened folder (the file cache's key).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "config/config.hpp"
#include "static/file_cache.hpp"

namespace portico::staticfiles {

class LocationFiles {
public:
    // The location has root or alias.
    explicit LocationFiles(const config::LocationConfig& location);

    // Opened once; no descriptor when it could not be (logged).
    const Root& root() const { return root_; }

    // The file for `uri` (a normalized path) as a path relative to root():
    // "" is the folder itself. nullopt when the URI is not this location's
    // or would leave the alias folder ("/data../x" under prefix "/data").
    // Inline: every static request maps its path.
    std::optional<std::string_view> relative(std::string_view uri) const {
        if (kind_ == Kind::root) [[likely]]
            return uri.substr(1);
        return relative_to_alias(uri);
    }

private:
    enum class Kind { root, alias_folder, alias_file };
    std::optional<std::string_view> relative_to_alias(std::string_view uri) const;

    Kind kind_;
    std::string_view pattern_;  // the prefix replaced, or the exact path
    std::string file_name_;     // alias_file: the file's name in root_
    Root root_;
};

// A path segment starting with '.' (".env", ".git/config"), in a path
// relative to a root: hidden unless the location says dotfiles = true.
bool has_hidden_segment(std::string_view relative);

}  // namespace portico::staticfiles
