// Locations compiled at load time into the structures nginx's matching rules
// need, so choosing one per request is a hash lookup, a scan of prefixes and
// at most one pass of each regex.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "config/config.hpp"

namespace re2 {
class RE2;
}

namespace portico::router {

class Router {
public:
    // The locations of one site: `indices` into `locations` (which must
    // outlive the Router), in file order. Regexes were validated by the
    // config loader; one that fails to compile here is skipped.
    Router(const std::vector<config::LocationConfig>& locations,
           const std::vector<size_t>& indices);
    ~Router();
    Router(const Router&) = delete;
    Router& operator=(const Router&) = delete;

    // The index into `locations` (not into `indices`: the counters and the
    // serving are numbered so) of the location for a normalized path, or
    // -1 (404). Rules, in order:
    //   1. an exact location equal to the path;
    //   2. the longest matching prefix, if it has stop_regex;
    //   3. the first regex location, in file order, that matches anywhere;
    //   4. the longest matching prefix; none: -1.
    int match(std::string_view path) const;

private:
    struct Prefix {
        std::string_view text;
        int index;
        bool stop_regex;
    };
    struct Regex {
        std::unique_ptr<re2::RE2> re;
        int index;
    };
    std::unordered_map<std::string_view, int> exact_;
    std::vector<Prefix> prefixes_;  // longest first
    std::vector<Regex> regexes_;    // file order
};

}  // namespace portico::router
