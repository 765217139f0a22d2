// A regex location's captures ($1, $name) for the templates of its rules.
// The router keeps none (most requests never need them): a location whose
// templates use one matches its pattern again, on the request's path, when
// a rule is applied; every other location pays nothing.
#pragma once

#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "http/request.hpp"
#include "http/template_expand.hpp"

namespace re2 {
class RE2;
class StringPiece;
}  // namespace re2

namespace portico::http {

// True when one of `rules`' values uses a regex capture.
bool uses_captures(std::span<const config::HeaderRule> rules);

class LocationCaptures {
public:
    // Compiles the location's pattern when `needed` and it is a regex one.
    LocationCaptures(const config::LocationConfig& location, bool needed);
    ~LocationCaptures();
    LocationCaptures(const LocationCaptures&) = delete;
    LocationCaptures& operator=(const LocationCaptures&) = delete;

    // The groups of the pattern in the request's normalized path, valid
    // until the next call and while the path is unchanged; empty when not
    // needed.
    Captures match(const Request& request);

private:
    std::unique_ptr<re2::RE2> regex_;
    std::vector<re2::StringPiece> pieces_;
    std::vector<std::string_view> captures_;
};

}  // namespace portico::http
