// A location's rules that change where a request goes: redirect (nginx
// `return 3xx URL`), rewrite (nginx `rewrite REGEX REPLACEMENT FLAG`) and
// error_pages (nginx `error_page CODE URI`). Their templates are compiled
// here, so a bad variable or capture is a `-t` error at its column.
#include <charconv>

#include <re2/re2.h>

#include "config/sections.hpp"

namespace portico::config {

namespace {

// A regex location's groups, for a redirect's $1 (nginx's
// `location ~ ^/old/(.*)$ { return 301 /new/$1; }`); none otherwise.
CaptureScope location_captures(const LocationConfig& location) {
    return location.match == MatchKind::regex ? capture_scope(location.pattern) : CaptureScope{};
}

void read_redirect(const toml::node& node, const std::string& label, Diagnostics& diagnostics,
                   LocationConfig& location) {
    const toml::table* table = node.as_table();
    if (!table) {
        diagnostics.error(node.source(), label +
                                             ": redirect: expected a table like { to = "
                                             "\"https://example.com$request_uri\", status = 301 }, "
                                             "got " +
                                             describe(node));
        return;
    }
    TableReader reader(*table, label + ": redirect.", "redirect of " + label, diagnostics);
    RedirectConfig redirect;
    if (reader.require("to", "to = \"https://example.com$request_uri\"")) {
        read_template(*reader.get("to"), reader.field("to"), location_captures(location),
                      diagnostics, redirect.to);
    }
    if (const toml::node* status = reader.get("status")) {
        const auto* number = status->as_integer();
        int64_t value = number ? number->get() : 0;
        if (value == 301 || value == 302 || value == 303 || value == 307 || value == 308)
            redirect.status = static_cast<int>(value);
        else
            reader.wrong("status", *status, "301, 302, 303, 307 or 308");
    }
    reader.finish();
    location.redirect = std::move(redirect);
}

void read_rewrite_rule(const toml::node& node, const std::string& label, Diagnostics& diagnostics,
                       LocationConfig& location) {
    const toml::table* table = node.as_table();
    if (!table) {
        diagnostics.error(node.source(), label +
                                             ": rewrite: expected tables like { from = "
                                             "'^/old/(.*)$', to = '/new/$1', flag = \"last\" }, "
                                             "got " +
                                             describe(node));
        return;
    }
    TableReader reader(*table, label + ": rewrite.", "rewrite of " + label, diagnostics);
    RewriteRule rule;
    rule.where = position_of(table->source());
    bool ok =
        reader.require("from", "from = '^/old/(.*)$'") && reader.read_string("from", rule.from);
    if (ok) {
        re2::RE2 compiled(rule.from, re2::RE2::Quiet);
        if (!compiled.ok()) {
            reader.report("from", *reader.get("from"),
                          "not a valid RE2 regular expression: " + compiled.error());
            ok = false;
        }
    }
    if (reader.require("to", "to = '/new/$1'")) {
        ok = read_template(*reader.get("to"), reader.field("to"),
                           ok ? capture_scope(rule.from) : CaptureScope{}, diagnostics, rule.to) &&
             ok;
    }
    reader.read_choice("flag", rule.flag,
                       {{"last", RewriteFlag::last},
                        {"break", RewriteFlag::break_},
                        {"redirect", RewriteFlag::redirect},
                        {"permanent", RewriteFlag::permanent}});
    reader.finish();
    if (ok) location.rewrite.push_back(std::move(rule));
}

void read_rewrite(TableReader& reader, const std::string& label, Diagnostics& diagnostics,
                  LocationConfig& location) {
    const toml::node* node = reader.get("rewrite");
    if (!node) return;
    const toml::array* rules = node->as_array();
    if (!rules || rules->empty()) {
        reader.wrong("rewrite", *node,
                     "an array of rules like [{ from = '^/old/(.*)$', to = '/new/$1' }]");
        return;
    }
    for (const toml::node& rule : *rules) read_rewrite_rule(rule, label, diagnostics, location);
}

void read_error_page(const toml::key& key, const toml::node& value, const std::string& label,
                     Diagnostics& diagnostics, LocationConfig& location) {
    std::string field = label + ": error_pages." + std::string(key.str());
    int status = 0;
    std::string_view code = key.str();
    auto [end, error] = std::from_chars(code.data(), code.data() + code.size(), status);
    if (error != std::errc{} || end != code.data() + code.size() || status < 300 || status > 599) {
        diagnostics.error(key.source(), field + ": expected a status from 300 to 599");
        return;
    }
    const auto* text = value.as_string();
    if (text && !text->get().starts_with('/')) {
        diagnostics.error(value.source(),
                          field + ": expected a URI starting with '/', got " + describe(value));
        return;
    }
    Template uri;
    if (read_template(value, field, CaptureScope{}, diagnostics, uri))
        location.error_pages.emplace_back(status, std::move(uri));
}

void read_error_pages(TableReader& reader, const std::string& label, Diagnostics& diagnostics,
                      LocationConfig& location) {
    const toml::node* node = reader.get("error_pages");
    if (!node) return;
    const toml::table* table = node->as_table();
    if (!table) {
        reader.wrong("error_pages", *node, "a table like { 404 = \"/404.html\" }");
        return;
    }
    for (const auto& [key, value] : entries_in_file_order(*table))
        read_error_page(*key, *value, label, diagnostics, location);
}

}  // namespace

void read_rules(TableReader& reader, const std::string& label, Diagnostics& diagnostics,
                LocationConfig& location) {
    if (const toml::node* redirect = reader.get("redirect"))
        read_redirect(*redirect, label, diagnostics, location);
    read_rewrite(reader, label, diagnostics, location);
    read_error_pages(reader, label, diagnostics, location);
}

}  // namespace portico::config
