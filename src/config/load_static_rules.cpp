// A location's alias, expires and try_files keys: where its files are, how
// long clients may keep them, and what answers when a file is missing.
#include <sys/stat.h>

#include <charconv>
#include <limits>

#include "config/sections.hpp"
#include "config/units.hpp"

namespace portico::config {

namespace {

void read_alias(TableReader& reader, LoadContext& context, LocationConfig& location) {
    std::string text;
    if (!reader.read_string("alias", text)) return;
    const toml::node& node = *reader.get("alias");
    if (text.empty() || text.find('\0') != std::string::npos) {
        reader.wrong("alias", node, "a folder path without NUL bytes");
        return;
    }
    if (reader.table().contains("root")) {
        reader.report("alias", node,
                      "cannot be combined with root: alias replaces the matched prefix with its "
                      "folder, root appends the whole path to its own; keep one");
        return;
    }
    if (location.match == MatchKind::regex) {
        // nginx takes alias in a regex location only with captures that
        // build the path; portico's alias replaces a prefix.
        reader.report("alias", node,
                      "applies to prefix and exact locations only (a regex location has no "
                      "prefix to replace); use root, or a prefix location");
        return;
    }
    std::string path = resolve_path(context, text);
    if (location.match == MatchKind::exact) {
        // The file itself (nginx: location = /favicon.ico { alias ...; }).
        struct stat info {};
        std::string folder = path.substr(0, path.rfind('/'));
        if (::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
            reader.report("alias", node,
                          "in an exact location names the file it answers with, and '" + path +
                              "' is a directory");
        } else if (std::string why = unusable_directory(folder.empty() ? "/" : folder);
                   !why.empty()) {
            reader.report("alias", node,
                          "the folder of '" + path + "' is not a readable directory: " + why);
        }
    } else if (std::string why = unusable_directory(path); !why.empty()) {
        reader.report("alias", node, "'" + path + "' is not a readable directory: " + why);
    }
    location.alias = std::move(path);
}

// "365d", "12h", "30m", "90s"; "off": no headers, as when unset.
void read_expires(TableReader& reader, LocationConfig& location) {
    std::string text;
    if (!reader.read_string("expires", text) || text == "off") return;
    constexpr std::string_view expected =
        "a duration in whole seconds such as \"365d\", \"12h\", \"30m\", \"90s\", or \"off\"";
    int64_t seconds = -1;
    if (text.size() > 1 && text.back() == 'd') {
        int64_t days = 0;
        auto [end, error] = std::from_chars(text.data(), text.data() + text.size() - 1, days);
        if (error == std::errc() && end == text.data() + text.size() - 1 && days >= 0 &&
            days <= std::numeric_limits<int32_t>::max() / 86400)
            seconds = days * 86400;
    } else if (std::optional<Duration> duration = parse_duration(text);
               duration && duration->count() % 1000 == 0 &&
               duration->count() / 1000 <= std::numeric_limits<int32_t>::max()) {
        seconds = duration->count() / 1000;
    }
    if (seconds < 0) {
        reader.wrong("expires", expected);
        return;
    }
    if (location.cache_control && location.cache_control->find("max-age") != std::string::npos) {
        // expires writes max-age itself; a second one would contradict it.
        reader.report("expires", *reader.get("expires"),
                      "cache_control already sets max-age; with expires, leave it out of "
                      "cache_control");
        return;
    }
    location.expires = std::chrono::seconds(seconds);
}

// A file entry or a URI fallback is a path: it starts with '/' or with a
// variable ($uri).
bool is_path_template(const Template& entry) {
    return entry.source.starts_with('/') || entry.source.starts_with('$');
}

// The last entry: "=404", "@app", or a URI answered through the locations.
void read_fallback(const toml::node& node, const std::string& field, LoadContext& context,
                   const std::vector<UpstreamConfig>& upstreams, TryFilesConfig& try_files) {
    const std::string& text = node.as_string()->get();
    if (text.starts_with('=')) {
        int status = 0;
        auto [end, error] = std::from_chars(text.data() + 1, text.data() + text.size(), status);
        if (error != std::errc() || end != text.data() + text.size() || status < 100 ||
            status > 599) {
            context.diagnostics.error(node.source(), field +
                                                         ": expected \"=CODE\" with a status "
                                                         "100..599, got " +
                                                         describe(node));
            return;
        }
        try_files.fallback = TryFilesConfig::Fallback::status;
        try_files.status = status;
        return;
    }
    if (text.starts_with('@')) {
        std::string_view name = std::string_view(text).substr(1);
        for (size_t i = 0; i < upstreams.size(); ++i) {
            // Inline upstreams are named by their URL: only [upstream.NAME] tables count.
            if (upstreams[i].name == name && name.find("://") == std::string_view::npos) {
                try_files.fallback = TryFilesConfig::Fallback::upstream;
                try_files.upstream = i;
                return;
            }
        }
        context.diagnostics.error(node.source(), field + ": names unknown upstream '" +
                                                     std::string(name) + "'; define [upstream." +
                                                     std::string(name) + "]");
        return;
    }
    if (!read_template(node, field, CaptureScope{}, context.diagnostics, try_files.uri)) return;
    if (!is_path_template(try_files.uri))
        context.diagnostics.error(node.source(),
                                  field +
                                      ": expected a URI starting with '/', \"=CODE\" or "
                                      "\"@UPSTREAM\", got " +
                                      describe(node));
    try_files.fallback = TryFilesConfig::Fallback::uri;
}

// A file that loaded with errors is never used: what is read here need not
// be complete, only every problem reported.
void read_try_files(TableReader& reader, LoadContext& context,
                    const std::vector<UpstreamConfig>& upstreams, LocationConfig& location) {
    const toml::node* node = reader.get("try_files");
    if (!node) return;
    const toml::array* entries = node->as_array();
    if (!entries || entries->empty()) {
        reader.wrong("try_files", *node,
                     "a non-empty array such as [\"$uri\", \"$uri/\", \"/index.html\"]");
        return;
    }
    if (!location.root && !location.alias && !reader.table().contains("root") &&
        !reader.table().contains("alias")) {
        reader.report("try_files", *node, "needs root or alias: its entries name files there");
    }
    if (reader.table().contains("proxy")) {
        // root + proxy is already "try_files $uri @upstream".
        reader.report("try_files", *node,
                      "cannot be combined with proxy; end try_files with \"@UPSTREAM\" instead");
    }
    TryFilesConfig try_files;
    for (size_t i = 0; i < entries->size(); ++i) {
        const toml::node& entry = *entries->get(i);
        std::string field = reader.field("try_files") + "[" + std::to_string(i) + "]";
        if (!entry.is_string()) {
            context.diagnostics.error(entry.source(),
                                      field + ": expected a string, got " + describe(entry));
            continue;
        }
        if (i + 1 == entries->size()) {
            read_fallback(entry, field, context, upstreams, try_files);
            continue;
        }
        Template file;
        if (!read_template(entry, field, CaptureScope{}, context.diagnostics, file)) continue;
        if (!is_path_template(file)) {
            context.diagnostics.error(entry.source(),
                                      field +
                                          ": expected a file path starting with '/' or a "
                                          "variable ($uri); only the last entry may be a "
                                          "\"=CODE\" or \"@UPSTREAM\" fallback, got " +
                                          describe(entry));
        }
        try_files.files.push_back(std::move(file));
    }
    location.try_files = std::move(try_files);
}

}  // namespace

void read_static_rules(TableReader& reader, LoadContext& context,
                       const std::vector<UpstreamConfig>& upstreams, LocationConfig& location) {
    read_alias(reader, context, location);
    read_expires(reader, location);
    read_try_files(reader, context, upstreams, location);
}

}  // namespace portico::config
