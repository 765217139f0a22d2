#include "convert/conversion.hpp"

#include <algorithm>
#include <iterator>
#include <filesystem>
#include <string_view>

#include "convert/toml_text.hpp"

namespace portico::convert {

namespace {

// clang-format off
constexpr std::string_view inherited_names[] = {
    "root", "index", "add_header", "proxy_set_header", "proxy_hide_header", "expires",
    "gzip", "gzip_types", "gzip_comp_level", "gzip_min_length", "gzip_proxied", "gzip_vary",
    "gzip_static", "gzip_http_version", "gzip_disable", "gzip_buffers", "brotli",
    "brotli_types", "brotli_comp_level", "brotli_static", "brotli_min_length", "error_page",
    "proxy_connect_timeout", "proxy_read_timeout", "proxy_send_timeout", "proxy_http_version",
    "proxy_intercept_errors", "client_max_body_size", "keepalive_timeout", "access_log",
    "ssl_certificate", "ssl_certificate_key", "ssl_protocols", "ssl_ciphers", "http2",
    "proxy_buffering", "proxy_redirect", "proxy_cache_bypass", "sendfile", "tcp_nopush",
    "tcp_nodelay", "charset", "autoindex", "default_type", "server_tokens", "keepalive_requests",
    "limit_req", "limit_req_status", "limit_conn", "limit_conn_status", "allow", "deny",
    "auth_basic", "auth_basic_user_file", "limit_req_log_level", "limit_conn_log_level",
    "proxy_cache", "proxy_cache_valid", "proxy_cache_key", "proxy_cache_lock",
    "proxy_cache_lock_timeout", "proxy_cache_lock_age", "proxy_cache_use_stale",
    "proxy_cache_background_update", "proxy_cache_methods", "proxy_cache_min_uses",
    "proxy_cache_convert_head", "proxy_cache_revalidate", "proxy_cache_max_range_offset",
    "proxy_cache_purge", "proxy_no_cache", "proxy_ignore_headers"};
// clang-format on

}  // namespace

bool is_inherited(const std::string& name) {
    return std::find(std::begin(inherited_names), std::end(inherited_names), name) !=
           std::end(inherited_names);
}

Scope scope_of(const Scope& parent, const std::vector<Directive>& block) {
    Scope scope = parent;
    std::vector<std::string> replaced;
    for (const Directive& directive : block) {
        if (!is_inherited(directive.name)) continue;
        std::string key =
            directive.name == "allow" || directive.name == "deny" ? "allow_deny" : directive.name;
        if (std::find(replaced.begin(), replaced.end(), key) == replaced.end()) {
            scope[key].clear();
            replaced.push_back(key);
        }
        scope[key].push_back(&directive);
    }
    return scope;
}

std::string named_option(const Directive& directive, const std::string& name) {
    for (const std::string& arg : directive.args) {
        if (arg.starts_with(name + "=")) return arg.substr(name.size() + 1);
    }
    return "";
}

const Directive* last_in(const Scope& scope, const std::string& name) {
    auto found = scope.find(name);
    if (found == scope.end() || found->second.empty()) return nullptr;
    return found->second.back();
}

void Conversion::refuse(const Directive& directive, std::string why) {
    for (const Refusal& refusal : refusals) {
        if (refusal.source.file == directive.source.file &&
            refusal.source.line == directive.source.line && refusal.directive == directive.text())
            return;
    }
    refusals.push_back({directive.source, directive.text(), std::move(why)});
}

void Conversion::note(Table& table, const Directive& directive, const std::string& why) {
    std::string line = origin(directive) + ": " + why;
    if (std::find(table.comments.begin(), table.comments.end(), line) == table.comments.end())
        table.comments.push_back(std::move(line));
}

bool Conversion::arity(const Directive& directive, size_t min, size_t max) {
    if (directive.args.size() >= min && directive.args.size() <= max) return true;
    refuse(directive, "unexpected number of arguments");
    return false;
}

std::string Conversion::origin(const Directive& directive) {
    return std::filesystem::path(directive.source.file).filename().string() + ":" +
           std::to_string(directive.source.line) + ": " + directive.text();
}

std::string Conversion::absolute(const std::string& path) const {
    std::filesystem::path full =
        path.starts_with('/') ? std::filesystem::path(path) : std::filesystem::path(prefix_) / path;
    std::string text = full.lexically_normal().string();
    // nginx keeps a trailing slash where it matters (alias); so do we.
    if (path.ends_with('/') && !text.ends_with('/')) text += '/';
    return text;
}

void Conversion::set_global(Table& table, const std::string& key, const std::string& value,
                            const Directive* directive) {
    const std::string* current = table.entries.get(key);
    if (current && *current != value) {
        // The explicit one of the two is refused (an nginx default has no line).
        const Directive* explicit_one = directive ? directive : global_setters_[key];
        if (explicit_one) {
            refuse(*explicit_one, "portico has one " + key +
                                      " for every site and location, and another level has " +
                                      (directive ? *current : value));
        }
        return;
    }
    if (!current) {
        table.entries.set(key, value);
        global_setters_[key] = directive;
    }
}

bool Conversion::is_upstream_block(const std::string& name) const {
    for (const Directive* block : upstream_blocks) {
        if (!block->args.empty() && block->args[0] == name) return true;
    }
    return false;
}

}  // namespace portico::convert
