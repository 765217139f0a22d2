// proxy_cache_path ([cache.NAME]) and proxy_cache with its proxy_cache_*
// options (a proxied location's `cache` table), to the keys of the spec's
// "Response cache"; add_header NAME $upstream_cache_status is its
// status_header.
#include <algorithm>
#include <array>

#include "convert/conversion.hpp"
#include "convert/nginx_values.hpp"
#include "convert/toml_text.hpp"

namespace portico::convert {

namespace {

// nginx's keys_zone holds keys only (about 8,000 per MiB), the bodies live
// on disk and in the page cache; portico's memory holds keys and bodies.
constexpr unsigned long long memory_per_key_byte = 8;
// The least memory and max_size portico's loader takes.
constexpr unsigned long long least_memory = 256 * 1024;
constexpr unsigned long long most_memory = 1ULL << 40;
constexpr unsigned long long least_max_size = 1024 * 1024;
// nginx answers stale for as long as the entry is kept; portico's stale
// answers have a bound.
constexpr const char* nginx_stale_bound = "24h";
// The statuses portico's `valid` may name (docs/configuration.md,
// "Response cache"): RFC 9111's heuristically cacheable ones, with 302 and
// 307, without 206.
constexpr std::array<const char*, 13> valid_statuses{
    "200", "203", "204", "300", "301", "302", "307", "308", "404", "405", "410", "414", "501"};
// proxy_cache_use_stale's conditions that portico's stale_if_error covers
// (an unreadable answer is a 502 of portico's).
constexpr std::array<const char*, 7> error_conditions{
    "error", "timeout", "invalid_header", "http_500", "http_502", "http_503", "http_504"};

// A size as its loader reads it, in the largest unit that divides it.
std::string size_text(unsigned long long bytes) {
    static const std::array<std::pair<unsigned long long, const char*>, 3> units{
        {{1ULL << 30, "GiB"}, {1ULL << 20, "MiB"}, {1ULL << 10, "KiB"}}};
    for (const auto& [factor, unit] : units) {
        if (bytes % factor == 0) return toml_string(std::to_string(bytes / factor) + unit);
    }
    return std::to_string(bytes);
}

// Whole seconds as "10m", "1h", "90s".
std::string seconds_text(long long seconds) {
    if (seconds % 3600 == 0) return std::to_string(seconds / 3600) + "h";
    if (seconds % 60 == 0) return std::to_string(seconds / 60) + "m";
    return std::to_string(seconds) + "s";
}

Table* translated_zone(Conversion& conversion, const std::string& name) {
    auto found = std::find_if(conversion.out.caches.begin(), conversion.out.caches.end(),
                              [&](const auto& cache) { return cache.first == name; });
    return found == conversion.out.caches.end() ? nullptr : &found->second;
}

std::string zone_name(const Directive& path) {
    std::string zone = named_option(path, "keys_zone");
    return zone.substr(0, zone.find(':'));
}

// The [cache.NAME] table, translating its proxy_cache_path first when it
// comes later in the file (nginx allows it).
Table* cache_zone(Conversion& conversion, const std::string& name) {
    for (const Directive* path : conversion.cache_paths) {
        if (zone_name(*path) == name) {
            translate_cache_path(conversion, *path);
            break;
        }
    }
    return translated_zone(conversion, name);
}

bool contains(const auto& list, const std::string& item) {
    return std::find(list.begin(), list.end(), item) != list.end();
}

// proxy_cache_valid lines in order: nginx takes the first entry that matches
// a status, `any` included; portico's exact status wins over `any`. So an
// entry after an `any` (dead in nginx) is refused, a repeated status keeps
// the first (as nginx).
std::string valid_table(Conversion& conversion, const std::vector<const Directive*>& lines) {
    std::vector<std::pair<std::string, std::string>> entries;
    const Directive* any = nullptr;
    for (const Directive* line : lines) {
        if (line->args.empty()) {
            conversion.refuse(*line, "expects [codes] and a time");
            continue;
        }
        std::optional<long long> seconds = nginx_seconds(line->args.back());
        if (!seconds || *seconds < 1) {
            conversion.refuse(*line, "portico's valid takes a time of 1s or more, in seconds");
            continue;
        }
        std::vector<std::string> codes(line->args.begin(), line->args.end() - 1);
        if (codes.empty()) codes = {"200", "301", "302"};  // nginx's default
        std::string why;
        for (const std::string& code : codes) {
            if (code != "any" && !contains(valid_statuses, code)) {
                why = "portico's cache stores no " + code +
                      " by valid (it takes 200, 203, 204, 300, 301, 302, 307, 308, 404, 405, 410, "
                      "414, 501 and any)";
            } else if (any) {
                why = "never applies in nginx (" + any->text() +
                      " comes first and covers it); portico would apply it";
            }
        }
        if (!why.empty()) {
            conversion.refuse(*line, why);
            continue;
        }
        for (const std::string& code : codes) {
            bool repeated = std::any_of(entries.begin(), entries.end(),
                                        [&](const auto& kept) { return kept.first == code; });
            if (!repeated) entries.emplace_back(code, toml_string(seconds_text(*seconds)));
        }
        if (contains(codes, "any")) any = line;
    }
    return entries.empty() ? "" : toml_inline_table(entries);
}

// proxy_cache_use_stale: stale_if_error for the error conditions,
// stale_while_revalidate for `updating` (with or without
// proxy_cache_background_update, which takes effect only with it).
void use_stale(Conversion& conversion, const Scope& scope, Table& location,
               std::vector<std::pair<std::string, std::string>>& cache) {
    const Directive* stale = last_in(scope, "proxy_cache_use_stale");
    std::vector<std::string> errors;
    bool updating = false;
    for (const std::string& condition : stale ? stale->args : std::vector<std::string>{}) {
        if (condition == "updating") {
            updating = true;
        } else if (contains(error_conditions, condition)) {
            errors.push_back(condition);
        } else if (condition != "off") {
            return conversion.refuse(*stale,
                                     "portico answers stale on 500, 502, 503, 504, connection "
                                     "errors and timeouts, not on " +
                                         condition);
        }
    }
    if (!errors.empty()) {
        cache.emplace_back("stale_if_error", toml_string(nginx_stale_bound));
        std::string also;
        for (const char* condition : error_conditions) {
            if (!contains(errors, condition))
                also += std::string(also.empty() ? "" : ", ") + condition;
        }
        conversion.note(location, *stale,
                        std::string("nginx answers stale with no age limit: stale_if_error = ") +
                            nginx_stale_bound +
                            (also.empty() ? "" : "; portico's also covers " + also));
    }
    const Directive* background = last_in(scope, "proxy_cache_background_update");
    bool in_background = background && background->args == std::vector<std::string>{"on"};
    if (updating) {
        cache.emplace_back("stale_while_revalidate", toml_string(nginx_stale_bound));
        conversion.note(
            location, *stale,
            std::string("updating: stale_while_revalidate = ") + nginx_stale_bound +
                (in_background ? ""
                               : "; the request that finds the entry expired gets the "
                                 "stale copy too (nginx without "
                                 "proxy_cache_background_update: it waits for the app)"));
    } else if (in_background) {
        conversion.note(
            location, *background,
            "dropped: without proxy_cache_use_stale updating it does nothing, as in nginx");
    }
}

// A bypass or no-cache condition other than an upgrade (which portico
// passes through uncached) has no equivalent.
void conditions(Conversion& conversion, const Scope& scope, bool cache_on, Table& location) {
    for (const char* name : {"proxy_cache_bypass", "proxy_no_cache"}) {
        auto found = scope.find(name);
        if (found == scope.end()) continue;
        for (const Directive* directive : found->second) {
            if (!cache_on) {
                conversion.note(location, *directive,
                                "dropped: no proxy_cache here, nothing to bypass");
            } else if (directive->args == std::vector<std::string>{"$http_upgrade"}) {
                conversion.note(location, *directive, "dropped: portico never caches an upgrade");
            } else {
                conversion.refuse(*directive, "portico's cache has no bypass conditions");
            }
        }
    }
}

// The proxy_cache_* options portico has no key for: dropped where nginx's
// value means what portico does, else refused.
void fixed_behaviour(Conversion& conversion, const Scope& scope, Table& location) {
    if (const Directive* methods = last_in(scope, "proxy_cache_methods")) {
        bool get_head = std::all_of(methods->args.begin(), methods->args.end(),
                                    [](const std::string& m) { return m == "GET" || m == "HEAD"; });
        if (get_head)
            conversion.note(location, *methods, "dropped: portico caches GET and HEAD");
        else
            conversion.refuse(*methods, "portico caches GET and HEAD only");
    }
    if (const Directive* uses = last_in(scope, "proxy_cache_min_uses");
        uses && uses->args != std::vector<std::string>{"1"}) {
        conversion.refuse(*uses, "portico stores a response on its first miss");
    }
    if (const Directive* head = last_in(scope, "proxy_cache_convert_head");
        head && head->args != std::vector<std::string>{"on"}) {
        conversion.refuse(*head, "portico asks the app for a GET on a HEAD miss");
    }
    if (const Directive* revalidate = last_in(scope, "proxy_cache_revalidate");
        revalidate && revalidate->args == std::vector<std::string>{"on"}) {
        conversion.note(
            location, *revalidate,
            "dropped: nginx then asks the app with If-Modified-Since; the answer is the "
            "same");
    }
    if (const Directive* ignored = last_in(scope, "proxy_ignore_headers")) {
        bool accel_only =
            std::all_of(ignored->args.begin(), ignored->args.end(),
                        [](const std::string& name) { return name.starts_with("X-Accel-"); });
        if (accel_only)
            conversion.note(location, *ignored, "dropped: portico reads no X-Accel-* fields");
        else
            conversion.refuse(*ignored, "portico always reads the app's caching fields (RFC 9111)");
    }
    for (const char* name :
         {"proxy_cache_lock_age", "proxy_cache_max_range_offset", "proxy_cache_purge"}) {
        if (const Directive* directive = last_in(scope, name))
            conversion.refuse(*directive, "portico's cache has no equivalent");
    }
}

// add_header NAME $upstream_cache_status (the response options leave it
// out of `headers`).
void status_header(Conversion& conversion, const Scope& scope,
                   std::vector<std::pair<std::string, std::string>>& cache) {
    auto found = scope.find("add_header");
    if (found == scope.end()) return;
    for (const Directive* directive : found->second) {
        if (!shows_cache_status(*directive)) continue;
        if (std::any_of(cache.begin(), cache.end(),
                        [](const auto& entry) { return entry.first == "status_header"; }))
            conversion.refuse(*directive, "portico's cache has one status_header");
        else
            cache.emplace_back("status_header", toml_string(directive->args[0]));
    }
}

}  // namespace

bool shows_cache_status(const Directive& add_header) {
    return add_header.args.size() >= 2 && add_header.args[1] == "$upstream_cache_status";
}

void translate_cache_path(Conversion& conversion, const Directive& path) {
    auto pending = std::find(conversion.cache_paths.begin(), conversion.cache_paths.end(), &path);
    if (pending == conversion.cache_paths.end()) return;  // done for a location before it
    conversion.cache_paths.erase(pending);
    const std::string zone = named_option(path, "keys_zone");
    size_t colon = zone.find(':');
    std::optional<unsigned long long> keys_bytes =
        colon == std::string::npos ? std::nullopt : nginx_size(zone.substr(colon + 1));
    if (path.args.empty() || path.args[0].find('=') != std::string::npos || !keys_bytes ||
        colon == 0)
        return conversion.refuse(path, "expects a path and keys_zone=NAME:SIZE");
    const std::string name = zone.substr(0, colon);
    if (translated_zone(conversion, name))
        return conversion.refuse(path, "a second keys_zone " + name);
    Table table;
    table.comments.push_back(Conversion::origin(path));
    unsigned long long memory =
        std::clamp(*keys_bytes * memory_per_key_byte, least_memory, most_memory);
    table.entries.set("memory", size_text(memory));
    table.comments.push_back("memory: " + std::to_string(memory_per_key_byte) +
                             " x keys_zone's size (nginx's zone holds keys only, its bodies live "
                             "in the page cache): adjust to the hot objects' size");
    table.entries.set("path", toml_string(conversion.absolute(path.args[0])));
    for (size_t i = 1; i < path.args.size(); ++i) {
        const std::string& arg = path.args[i];
        std::string key = arg.substr(0, arg.find('='));
        if (key == "keys_zone") continue;
        if (key == "max_size") {
            std::optional<unsigned long long> bytes = nginx_size(named_option(path, "max_size"));
            if (!bytes) return conversion.refuse(path, "max_size= takes a size");
            table.entries.set("max_size", size_text(std::max(*bytes, least_max_size)));
        } else if (key == "inactive") {
            table.comments.push_back(arg +
                                     ": dropped: portico keeps an unused entry until space "
                                     "runs short (least recently used first)");
        } else if (key == "levels" || key == "use_temp_path" || key == "min_free" ||
                   key.starts_with("manager_") || key.starts_with("loader_")) {
            table.comments.push_back(arg +
                                     ": dropped: portico lays out and loads its disk tier itself");
        } else {
            return conversion.refuse(path, "portico's cache has no " + key);
        }
    }
    if (named_option(path, "inactive").empty())
        table.comments.push_back(
            "nginx drops entries unused for 10m (inactive); portico keeps "
            "them until space runs short");
    conversion.out.caches.emplace_back(name, std::move(table));
}

void translate_cache(Conversion& conversion, const Scope& scope, Table& location) {
    const Directive* proxy_cache = last_in(scope, "proxy_cache");
    bool on = proxy_cache && proxy_cache->args != std::vector<std::string>{"off"};
    conditions(conversion, scope, on, location);
    if (!on) return;
    if (!conversion.arity(*proxy_cache, 1, 1)) return;
    const std::string& zone = proxy_cache->args[0];
    if (zone.find('$') != std::string::npos)
        return conversion.refuse(*proxy_cache,
                                 "portico's cache zone is named, not chosen by variables");
    if (!cache_zone(conversion, zone))
        return conversion.refuse(*proxy_cache, "no proxy_cache_path with keys_zone=" + zone);

    std::vector<std::pair<std::string, std::string>> cache{{"zone", toml_string(zone)}};
    if (auto lines = scope.find("proxy_cache_valid"); lines != scope.end()) {
        if (std::string valid = valid_table(conversion, lines->second); !valid.empty())
            cache.emplace_back("valid", valid);
    }
    if (const Directive* key = last_in(scope, "proxy_cache_key")) {
        std::string regex;
        if (const std::string* pattern = location.entries.get("regex"))
            regex = pattern->substr(1, pattern->size() - 2);
        if (!conversion.arity(*key, 1, 1)) return;
        if (std::string why = template_refusal(key->args[0], regex); !why.empty())
            return conversion.refuse(*key, why);
        cache.emplace_back("key", toml_string(key->args[0]));
    } else {
        conversion.note(location, *proxy_cache,
                        "key: portico's $scheme$host$request_uri (nginx's "
                        "$scheme$proxy_host$request_uri shares entries between server names)");
    }
    if (const Directive* lock = last_in(scope, "proxy_cache_lock");
        lock && lock->args == std::vector<std::string>{"on"}) {
        cache.emplace_back("lock", "true");
        if (const Directive* timeout = last_in(scope, "proxy_cache_lock_timeout")) {
            std::optional<std::string> duration =
                timeout->args.size() == 1 ? portico_duration(timeout->args[0]) : std::nullopt;
            if (!duration || *duration == "0s")
                return conversion.refuse(*timeout, "expects a time");
            cache.emplace_back("lock_timeout", toml_string(*duration));
        }
    }
    use_stale(conversion, scope, location, cache);
    status_header(conversion, scope, cache);
    fixed_behaviour(conversion, scope, location);
    conversion.note(location, *proxy_cache,
                    "the app's Cache-Control, Expires and Vary are read as RFC 9111 says "
                    "(docs/convert.md: where nginx reads them otherwise)");
    location.entries.set("cache", toml_inline_table(cache));
}

void refuse_cache_in_fallback(Conversion& conversion, const Scope& named_scope) {
    const Directive* proxy_cache = last_in(named_scope, "proxy_cache");
    if (proxy_cache && proxy_cache->args != std::vector<std::string>{"off"}) {
        conversion.refuse(*proxy_cache,
                          "in a named location reached by try_files: portico's cache belongs to "
                          "a location with proxy");
    }
}

}  // namespace portico::convert
