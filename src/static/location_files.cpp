#include "static/location_files.hpp"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>

#include <cerrno>
#include <cstring>

#include "core/log.hpp"

namespace portico::staticfiles {

namespace {

Root open_root(const std::string& path) {
    Root root;
    root.fd.reset(::open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    char real[PATH_MAX];
    if (!root.fd || ::realpath(path.c_str(), real) == nullptr) {
        log::error("folder '{}' cannot be opened: {}; its location answers 500 until a reload",
                   path, std::strerror(errno));
        root.fd.reset();
        return root;
    }
    root.real_path = real;
    if (root.real_path.size() > 1 && root.real_path.back() == '/') root.real_path.pop_back();
    return root;
}

}  // namespace

LocationFiles::LocationFiles(const config::LocationConfig& location)
    : kind_(location.root                                ? Kind::root
            : location.match == config::MatchKind::exact ? Kind::alias_file
                                                         : Kind::alias_folder),
      pattern_(location.pattern) {
    if (kind_ == Kind::root) {
        root_ = open_root(*location.root);
    } else if (kind_ == Kind::alias_folder) {
        root_ = open_root(*location.alias);
    } else {
        // The config made the alias absolute: its folder is what precedes the last '/'.
        const std::string& alias = *location.alias;
        size_t slash = alias.rfind('/');
        file_name_ = alias.substr(slash + 1);
        root_ = open_root(slash == 0 ? "/" : alias.substr(0, slash));
    }
}

std::optional<std::string_view> LocationFiles::relative_to_alias(std::string_view uri) const {
    if (kind_ == Kind::alias_file) {
        if (uri != pattern_) return std::nullopt;
        return std::string_view(file_name_);
    }
    if (!uri.starts_with(pattern_)) return std::nullopt;
    std::string_view rest = uri.substr(pattern_.size());
    if (rest.empty()) return rest;
    if (pattern_.ends_with('/')) return rest;
    // Prefix "/data", alias "/srv/data": "/data/x" is /srv/data/x, but
    // "/data../secret" or "/datax" would name /srv/data../secret and
    // /srv/datax, outside the folder (nginx's alias traversal).
    if (!rest.starts_with('/')) return std::nullopt;
    return rest.substr(1);
}

bool has_hidden_segment(std::string_view relative) {
    if (relative.starts_with('.')) return true;
    for (size_t i = 0; i + 1 < relative.size(); ++i)
        if (relative[i] == '/' && relative[i + 1] == '.') return true;
    return false;
}

}  // namespace portico::staticfiles
