#include "http/conditional.hpp"

#include <cstdio>

#include "core/http_date.hpp"
#include "http/header_text.hpp"

namespace portico::http {

namespace {

// W/"x" and "x" are the same tag under weak comparison.
std::string_view opaque_tag(std::string_view tag) {
    if (tag.size() >= 2 && tag[0] == 'W' && tag[1] == '/') tag.remove_prefix(2);
    return tag;
}

}  // namespace

std::string make_etag(const struct timespec& mtime, off_t size) {
    char text[64];
    int length = std::snprintf(
        text, sizeof text, "\"%llx.%lx-%llx\"", static_cast<unsigned long long>(mtime.tv_sec),
        static_cast<unsigned long>(mtime.tv_nsec), static_cast<unsigned long long>(size));
    return std::string(text, static_cast<size_t>(length));
}

bool none_match_fails(std::string_view if_none_match, std::string_view etag) {
    if (http::trim_ows(if_none_match) == "*") return true;
    bool matched = false;
    http::for_each_list_member(if_none_match, [&](std::string_view tag) {
        if (opaque_tag(tag) == opaque_tag(etag)) matched = true;
    });
    return matched;
}

bool not_modified(std::string_view if_none_match, std::string_view if_modified_since,
                  std::string_view etag, time_t mtime) {
    if (!if_none_match.empty()) return none_match_fails(if_none_match, etag);
    if (if_modified_since.empty()) return false;
    std::optional<time_t> since = core::parse_http_date(if_modified_since);
    return since && mtime <= *since;
}

bool if_range_holds(std::string_view if_range, std::string_view etag, time_t mtime) {
    if_range = http::trim_ows(if_range);
    if (if_range.empty()) return true;
    if (if_range.front() == '"') return if_range == etag;  // strong comparison
    if (if_range.starts_with("W/")) return false;
    std::optional<time_t> date = core::parse_http_date(if_range);
    return date && *date == mtime;
}

}  // namespace portico::http
