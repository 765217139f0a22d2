// A location's header rules: `headers` and `headers_always` on its responses
// (nginx add_header), `proxy_headers` on the request to its upstream (nginx
// proxy_set_header) and `hide_headers` on the upstream's response (nginx
// proxy_hide_header). Values are templates; their captures are those of a
// regex location's pattern.
#include <strings.h>

#include <algorithm>
#include <cctype>

#include "config/sections.hpp"

namespace portico::config {

namespace {

// Header names are case-insensitive (RFC 9110 section 5.1).
bool same_header_name(std::string_view a, std::string_view b) {
    return a.size() == b.size() && ::strncasecmp(a.data(), b.data(), a.size()) == 0;
}

// The message framing is portico's to write, on either side: a configured
// one would contradict the body actually sent.
bool is_framing_header(std::string_view name) {
    return same_header_name(name, "content-length") ||
           same_header_name(name, "transfer-encoding") || same_header_name(name, "connection");
}

// What refuses a name in one of the tables, or "" when it may be set.
using NameCheck = std::string (*)(std::string_view name);

std::string response_header_check(std::string_view name) {
    return is_framing_header(name) ? "set by portico itself, cannot be configured" : "";
}

std::string proxy_header_check(std::string_view name) {
    if (is_framing_header(name))
        return "the request's framing and connection are portico's to set, cannot be configured "
               "(a WebSocket handshake goes through with websocket = true)";
    // Upgrade without Connection: upgrade means nothing; with it, every
    // request would become a handshake.
    if (same_header_name(name, "upgrade"))
        return "portico forwards a WebSocket handshake's Upgrade itself (websocket = true)";
    return "";
}

// One `name = "template"` entry of a headers table into `rules`.
void read_rule(const toml::key& key, const toml::node& value, const std::string& field_prefix,
               NameCheck refused, const CaptureScope& scope, Diagnostics& diagnostics,
               std::vector<HeaderRule>& rules) {
    std::string name(key.str());
    std::string field = field_prefix + name;
    auto same_name = [&name](const HeaderRule& rule) { return same_header_name(rule.name, name); };
    if (!is_token(name)) {
        diagnostics.error(key.source(), field + ": not a valid header name");
    } else if (std::string why = refused(name); !why.empty()) {
        diagnostics.error(key.source(), field + ": " + why);
    } else if (std::any_of(rules.begin(), rules.end(), same_name)) {
        diagnostics.error(key.source(),
                          field + ": the same header is already set (case is ignored)");
    } else if (const auto* text = value.as_string(); !text || !is_header_value(text->get())) {
        diagnostics.error(value.source(), field + ": expected a string without line breaks, got " +
                                              describe(value));
    } else {
        HeaderRule rule;
        rule.name = std::move(name);
        if (read_template(value, field, scope, diagnostics, rule.value))
            rules.push_back(std::move(rule));
    }
}

void read_rules(TableReader& reader, std::string_view key, std::string_view example,
                NameCheck refused, const CaptureScope& scope, Diagnostics& diagnostics,
                std::vector<HeaderRule>& rules) {
    const toml::node* node = reader.get(key);
    if (!node) return;
    const toml::table* table = node->as_table();
    if (!table) {
        reader.wrong(key, *node, example);
        return;
    }
    for (const auto& [name, value] : entries_in_file_order(*table))
        read_rule(*name, *value, reader.field(key) + ".", refused, scope, diagnostics, rules);
}

void read_hide_headers(TableReader& reader, LocationConfig& location) {
    std::vector<std::string> names;
    if (!reader.read_string_array("hide_headers", names)) return;
    for (std::string& name : names) {
        if (!is_token(name)) {
            reader.report("hide_headers", *reader.get("hide_headers"),
                          "'" + name + "' is not a valid header name");
            return;
        }
        if (is_framing_header(name)) {
            reader.report("hide_headers", *reader.get("hide_headers"),
                          "'" + name +
                              "' is framing, which portico writes itself: it never "
                              "passes the upstream's");
            return;
        }
        // Compared with the upstream's names, case-insensitively, per response.
        for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    location.hide_headers = std::move(names);
}

}  // namespace

void read_header_rules(TableReader& reader, Diagnostics& diagnostics, LocationConfig& location) {
    CaptureScope scope;
    if (location.match == MatchKind::regex) scope = capture_scope(location.pattern);
    read_rules(reader, "headers", "a table like { \"X-Frame-Options\" = \"DENY\" }",
               response_header_check, scope, diagnostics, location.headers);
    if (reader.read_bool("headers_always", location.headers_always) &&
        !reader.table().contains("headers"))
        reader.report("headers_always", *reader.get("headers_always"),
                      "applies only to a location with headers");
    read_rules(reader, "proxy_headers", "a table like { \"X-Forwarded-Port\" = \"$server_port\" }",
               proxy_header_check, scope, diagnostics, location.proxy_headers);
    read_hide_headers(reader, location);
}

}  // namespace portico::config
