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

}  // namespace portico::test
