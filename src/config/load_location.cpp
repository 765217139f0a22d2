// [[location]] tables: how each matches, and what it does.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>

#include <re2/re2.h>

#include "config/sections.hpp"

namespace portico::config {

namespace {

constexpr std::array<std::pair<std::string_view, MatchKind>, 3> match_keys{{
    {"exact", MatchKind::exact},
    {"prefix", MatchKind::prefix},
    {"regex", MatchKind::regex},
}};

std::string_view kind_name(MatchKind kind) {
    for (const auto& [name, match] : match_keys) {
        if (match == kind) {
            return name;
        }
    }
    return {};
}

// Named by its match text when it has exactly one, else by its place in the
// file ("location #3"), so every message points at something the operator
// recognises.
std::string location_label(const toml::table& table, size_t number) {
    const toml::node* only = nullptr;
    int count = 0;
    for (const auto& [key, kind] : match_keys) {
        if (const toml::node* value = table.get(key)) {
            only = value;
            ++count;
        }
    }
    if (count == 1 && only->is_string()) {
        return "location '" + only->as_string()->get() + "'";
    }
    return "location #" + std::to_string(number);
}

bool check_pattern(TableReader& reader, std::string_view key, MatchKind kind,
                   const toml::node& value, const std::string& pattern) {
    if (kind != MatchKind::regex) {
        if (!pattern.starts_with('/')) {
            reader.wrong(key, value, "a path starting with '/'");
            return false;
        }
        return true;
    }
    re2::RE2 compiled(pattern, re2::RE2::Quiet);
    if (!compiled.ok()) {
        reader.report(
            key, value,
            describe(value) + " is not a valid RE2 regular expression: " + compiled.error());
        return false;
    }
    return true;
}

void read_match(TableReader& reader, const std::string& label, Diagnostics& diagnostics,
                LocationConfig& location) {
    std::vector<std::string_view> present;
    for (const auto& [key, kind] : match_keys) {
        if (!reader.get(key)) {
            continue;
        }
        present.push_back(key);
        std::string pattern;
        if (reader.read_string(key, pattern) &&
            check_pattern(reader, key, kind, *reader.get(key), pattern)) {
            location.match = kind;
            location.pattern = std::move(pattern);
        }
    }
    if (present.empty()) {
        diagnostics.error(location.where,
                          label + ": needs exactly one of exact, prefix or regex to match on");
    } else if (present.size() > 1) {
        diagnostics.error(location.where, label + ": has both " + std::string(present[0]) +
                                              " and " + std::string(present[1]) +
                                              "; a location matches in exactly one way");
    }
}

void read_root(TableReader& reader, const std::string& label, LoadContext& context,
               LocationConfig& location) {
    std::string text;
    if (!reader.read_string("root", text)) {
        return;
    }
    std::string root = resolve_path(context, text);
    if (std::string why = unusable_directory(root); !why.empty()) {
        context.diagnostics.error(
            reader.get("root")->source(),
            label + ": root '" + root + "' is not a readable directory: " + why);
    }
    location.root = std::move(root);
}

void read_static_options(TableReader& reader, LocationConfig& location) {
    if (reader.read_string_array("index", location.index)) {
        for (const std::string& name : location.index) {
            if (name.empty() || name.find('/') != std::string::npos) {
                reader.wrong("index", "file names without '/'");
                break;
            }
        }
    }
    reader.read_bool("dotfiles", location.dotfiles);
    reader.read_bool("tcp_nopush", location.tcp_nopush);
    std::string cache_control;
    if (read_header_value(reader, "cache_control", cache_control)) {
        location.cache_control = std::move(cache_control);
    }
}

void read_respond(const toml::node& node, const std::string& label, Diagnostics& diagnostics,
                  LocationConfig& location) {
    const toml::table* table = node.as_table();
    if (!table) {
        diagnostics.error(node.source(), label +
                                             ": respond: expected a table like "
                                             "{ status = 200, body = \"ok\\n\" }, got " +
                                             describe(node));
        return;
    }
    TableReader reader(*table, label + ": respond.", "respond of " + label, diagnostics);
    RespondConfig respond;
    // 444 is nginx's "close without a response", not an HTTP status.
    if (const toml::node* status = reader.get("status"); status && status->value_or(0) == 444)
        respond.status = 444;
    else
        reader.read_bounded("status", respond.status, 100, 599);
    reader.read_string("body", respond.body);
    reader.finish();
    location.respond = std::move(respond);
}

// An option without the setting it modifies is a mistake to report, not a
// no-op to ignore.
void require_companion(TableReader& reader, std::string_view key, bool has_companion,
                       std::string_view companion, Diagnostics& diagnostics) {
    const toml::node* value = reader.get(key);
    if (value && !has_companion) {
        diagnostics.error(
            value->source(),
            reader.field(key) + ": applies only to a location with " + std::string(companion));
    }
}

void check_actions(TableReader& reader, const std::string& label, Diagnostics& diagnostics,
                   const LocationConfig& location) {
    bool has_root = reader.table().contains("root") || reader.table().contains("alias");
    bool has_proxy = reader.table().contains("proxy");
    const toml::node* respond = reader.get("respond");
    // A rewrite-only location answers 404 for what its rules do not match.
    bool has_rewrite = reader.table().contains("rewrite");
    const toml::node* redirect = reader.get("redirect");
    if (!has_root && !has_proxy && !respond && !redirect && !has_rewrite) {
        diagnostics.error(location.where, label +
                                              ": needs something to do: root, alias, proxy, "
                                              "respond, redirect or rewrite");
    }
    if (redirect && (has_root || has_proxy || respond || has_rewrite)) {
        diagnostics.error(redirect->source(), label +
                                                  ": redirect answers every request: it cannot be "
                                                  "combined with root, alias, proxy, respond or "
                                                  "rewrite");
    }
    if (respond && (has_root || has_proxy)) {
        diagnostics.error(respond->source(),
                          label + ": respond cannot be combined with root, alias or proxy");
    }
    for (std::string_view key :
         {"index", "gzip_static", "precompressed", "cache_control", "dotfiles", "tcp_nopush"}) {
        require_companion(reader, key, has_root, "root or alias", diagnostics);
    }
    // Files and proxied responses alike (nginx's expires).
    require_companion(reader, "expires", has_root || has_proxy, "root, alias or proxy",
                      diagnostics);
    require_companion(reader, "compress", has_root || has_proxy, "root or proxy", diagnostics);
    // try_files' "@UPSTREAM" proxies as `proxy` would, with the same options
    // (nginx's named location holds its proxy_set_header lines).
    bool proxies = has_proxy || (location.try_files && location.try_files->upstream);
    for (std::string_view key : {"preserve_host", "websocket", "proxy_headers", "hide_headers"}) {
        require_companion(reader, key, proxies, "proxy or a try_files ending in \"@UPSTREAM\"",
                          diagnostics);
    }
    const toml::node* stop_regex = reader.get("stop_regex");
    if (stop_regex && location.match != MatchKind::prefix) {
        diagnostics.error(stop_regex->source(),
                          label + ": stop_regex applies only to prefix locations");
    }
}

// A site's location is labelled with the site first, so the counters of
// two sites' "/" stay apart: "example.com/", "example.com ~\.php$".
std::string default_name(std::string_view site_label, const LocationConfig& location) {
    if (site_label.empty()) return location.pattern;
    std::string separator = location.match == MatchKind::regex ? " ~" : "";
    return std::string(site_label) + separator + location.pattern;
}

LocationConfig read_location(const toml::table& table, size_t number, LoadContext& context,
                             std::vector<UpstreamConfig>& upstreams, std::string_view site_label) {
    std::string label = location_label(table, number);
    TableReader reader(table, label + ": ", label, context.diagnostics);
    LocationConfig location;
    location.where = position_of(table.source());
    read_match(reader, label, context.diagnostics, location);
    location.name = default_name(site_label, location);
    if (reader.read_string("name", location.name) && location.name.empty()) {
        reader.wrong("name", "a non-empty label");
    } else if (location.name == "-") {
        // The counters and the access log label requests without a location "-".
        const toml::node* name = reader.get("name");
        context.diagnostics.error(name ? name->source() : table.source(),
                                  label + ": the name \"-\" is kept for requests that match no "
                                          "location; set another name");
    }
    reader.read_bool("stop_regex", location.stop_regex);
    read_root(reader, label, context, location);
    read_static_options(reader, location);
    read_proxy(reader, context, upstreams, location);
    read_static_rules(reader, context, upstreams, location);
    reader.read_bool("preserve_host", location.preserve_host);
    reader.read_bool("websocket", location.websocket);
    if (const toml::node* respond = reader.get("respond")) {
        read_respond(*respond, label, context.diagnostics, location);
    }
    read_header_rules(reader, context.diagnostics, location);
    read_rules(reader, label, context.diagnostics, location);
    read_limits(reader, label, context, location);
    read_access(reader, label, context.diagnostics, location);
    read_auth(reader, label, context, location);
    read_compression(reader, label, context.diagnostics, location);
    read_location_cache(reader, label, context, location);
    check_actions(reader, label, context.diagnostics, location);
    reader.finish();
    return location;
}

// nginx refuses two locations with the same match in one server block; the
// router would silently keep only one of them.
void check_duplicate(const LocationConfig& location, const std::string& label,
                     const std::vector<LocationConfig>& earlier, Diagnostics& diagnostics) {
    for (const LocationConfig& other : earlier) {
        if (!location.pattern.empty() && other.site == location.site &&
            other.match == location.match && other.pattern == location.pattern) {
            diagnostics.error(location.where, label + ": the same " +
                                                  std::string(kind_name(location.match)) +
                                                  " location is already defined on line " +
                                                  std::to_string(other.where.line));
            return;
        }
    }
}

}  // namespace

std::string unusable_directory(const std::string& path) {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0) {
        return std::strerror(errno);
    }
    if (!S_ISDIR(info.st_mode)) {
        return std::strerror(ENOTDIR);
    }
    // Listing needs R, opening files below needs X.
    if (::access(path.c_str(), R_OK | X_OK) != 0) {
        return std::strerror(errno);
    }
    return {};
}

void read_locations(const toml::node& node, LoadContext& context,
                    std::vector<UpstreamConfig>& upstreams, std::vector<LocationConfig>& locations,
                    size_t site, std::string_view site_label) {
    const toml::array* array = node.as_array();
    if (!array) {
        context.diagnostics.error(
            node.source(),
            "location: expected [[location]] tables (double brackets), got " + describe(node));
        return;
    }
    size_t number = 0;
    for (const toml::node& element : *array) {
        ++number;
        const toml::table* table = element.as_table();
        if (!table) {
            context.diagnostics.error(element.source(), "location #" + std::to_string(number) +
                                                            ": expected a table, got " +
                                                            describe(element));
            continue;
        }
        LocationConfig location = read_location(*table, number, context, upstreams, site_label);
        location.site = site;
        check_duplicate(location, location_label(*table, number), locations, context.diagnostics);
        locations.push_back(std::move(location));
    }
}

}  // namespace portico::config
