// A static site for the tests: a temp folder of its own, filled before portico
// starts (the config loader checks that `root` is a readable directory). The
// root is SITE/www; everything else in SITE lies outside it.
#pragma once

#include <filesystem>
#include <string>

#include "harness.hpp"

namespace portico::test {

struct Site {
    TempDir dir;
    Site() { std::filesystem::create_directories(root()); }
    std::string root() const { return dir.path() + "/www"; }
    // The full path of www/relative.
    std::string path(const std::string& relative) const { return root() + "/" + relative; }
    // Writes www/relative; returns the full path.
    std::string write(const std::string& relative, const std::string& content) const {
        return dir.write("www/" + relative, content);
    }
};

// One worker and one location, prefix "/" with `root`; `location_extra` adds
// keys to the location, `before_locations` top-level tables (e.g. [mime]).
inline std::string static_site_config(const std::string& root, const std::string& location_extra = "",
                                      const std::string& before_locations = "") {
    return "[server]\nlisten = [\"{listen}\"]\nworkers = 1\n\n" + before_locations +
           "\n[[location]]\nprefix = \"/\"\nroot = '" + root + "'\n" + location_extra + "\n";
}

}  // namespace portico::test
