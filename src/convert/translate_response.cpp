// What a location adds to its responses: add_header (always), expires,
// gzip* and brotli* (compress), gzip_static / brotli_static
// (precompressed), error_page.
#include <algorithm>
#include <set>

#include "convert/conversion.hpp"
#include "convert/nginx_values.hpp"
#include "convert/toml_text.hpp"

namespace portico::convert {

namespace {

bool is_on(const Directive* directive) {
    return directive && directive->args == std::vector<std::string>{"on"};
}

void headers(Conversion& conversion, const Scope& scope, const std::string& regex,
             Table& location) {
    auto found = scope.find("add_header");
    if (found == scope.end() || found->second.empty()) return;
    std::vector<std::pair<std::string, std::string>> entries;
    std::optional<bool> always;
    for (const Directive* directive : found->second) {
        // Empty, so never sent, where nothing is cached; else the cache's.
        if (shows_cache_status(*directive)) continue;
        if (directive->args.size() < 2 || directive->args.size() > 3 ||
            (directive->args.size() == 3 && directive->args[2] != "always")) {
            conversion.refuse(*directive, "expects a name, a value and maybe always");
            continue;
        }
        bool this_always = directive->args.size() == 3;
        if (always && *always != this_always) {
            conversion.refuse(*directive,
                              "portico's headers_always is one per location: mix of "
                              "headers with and without always");
            continue;
        }
        std::string name = directive->args[0];
        if (std::any_of(entries.begin(), entries.end(),
                        [&](const auto& entry) { return entry.first == name; })) {
            conversion.refuse(*directive, "the same header twice");
            continue;
        }
        if (std::string why = template_refusal(directive->args[1], regex); !why.empty()) {
            conversion.refuse(*directive, why);
            continue;
        }
        always = this_always;
        entries.emplace_back(name, toml_string(directive->args[1]));
    }
    if (entries.empty()) return;
    location.entries.set("headers", toml_inline_table(entries));
    if (always && *always) location.entries.set("headers_always", "true");
}

void expires(Conversion& conversion, const Scope& scope, Table& location) {
    const Directive* directive = last_in(scope, "expires");
    if (!directive) return;
    if (directive->args == std::vector<std::string>{"off"}) return;
    std::optional<long long> seconds =
        directive->args.size() == 1 ? nginx_seconds(directive->args[0]) : std::nullopt;
    if (!seconds) {
        return conversion.refuse(*directive,
                                 "portico's expires takes a positive time (not max, "
                                 "epoch, @time, modified or a negative one)");
    }
    location.entries.set("expires", toml_string(std::to_string(*seconds) + "s"));
}

// gzip and brotli are one `compress` table in portico; it offers br, zstd
// and gzip, by the client's preference.
void compression(Conversion& conversion, const Scope& scope, Table& location) {
    const Directive* gzip = last_in(scope, "gzip");
    const Directive* brotli = last_in(scope, "brotli");
    if (!is_on(gzip) && !is_on(brotli)) return;
    std::set<std::string> types{"text/html"};  // nginx always compresses text/html
    for (const char* name : {"gzip_types", "brotli_types"}) {
        if (const Directive* list = last_in(scope, name)) {
            for (const std::string& type : list->args) {
                if (type == "*") return conversion.refuse(*list, "portico lists the types");
                types.insert(type);
            }
        }
    }
    std::vector<std::pair<std::string, std::string>> table{
        {"types", toml_string_array({types.begin(), types.end()})}};
    const Directive* min_length = last_in(scope, "gzip_min_length");
    if (!min_length) min_length = last_in(scope, "brotli_min_length");
    std::string min = "20";  // nginx's default
    if (min_length) {
        std::optional<unsigned long long> bytes =
            min_length->args.size() == 1 ? nginx_size(min_length->args[0]) : std::nullopt;
        if (!bytes) return conversion.refuse(*min_length, "expects a size");
        min = std::to_string(*bytes);
    }
    table.emplace_back("min_length", min);
    const Directive* gzip_level = last_in(scope, "gzip_comp_level");
    table.emplace_back("gzip_level",
                       gzip_level && gzip_level->args.size() == 1 ? gzip_level->args[0] : "1");
    const Directive* brotli_level = last_in(scope, "brotli_comp_level");
    table.emplace_back("brotli_level", brotli_level && brotli_level->args.size() == 1
                                           ? brotli_level->args[0]
                                           : "6");
    location.entries.set("compress", toml_inline_table(table));
    conversion.note(location, is_on(gzip) ? *gzip : *brotli,
                    std::string("compress: portico also offers ") +
                        (is_on(brotli) ? "" : "br and ") + (is_on(gzip) ? "" : "gzip and ") +
                        "zstd to clients that prefer them");
}

void precompressed(Conversion& conversion, const Scope& scope, Table& location) {
    const Directive* gzip_static = last_in(scope, "gzip_static");
    const Directive* brotli_static = last_in(scope, "brotli_static");
    for (const Directive* directive : {gzip_static, brotli_static}) {
        if (directive && !is_on(directive) && directive->args != std::vector<std::string>{"off"})
            conversion.refuse(*directive, "only on or off translate");
    }
    if (is_on(brotli_static)) {
        std::vector<std::string> codings{"br"};
        if (is_on(gzip_static)) codings.push_back("gzip");
        location.entries.set("precompressed", toml_string_array(codings));
    } else if (is_on(gzip_static)) {
        location.entries.set("gzip_static", "true");
    }
}

void error_pages(Conversion& conversion, const Scope& scope, bool has_proxy, Table& location) {
    auto found = scope.find("error_page");
    if (found == scope.end() || found->second.empty()) return;
    std::vector<std::pair<std::string, std::string>> pages;
    std::vector<std::string> statuses;
    for (const Directive* directive : found->second) {
        if (directive->args.size() < 2) {
            conversion.refuse(*directive, "expects statuses and a URI");
            continue;
        }
        const std::string& uri = directive->args.back();
        bool refused = false;
        if (directive->args.size() > 2 &&
            directive->args[directive->args.size() - 2].starts_with("=")) {
            conversion.refuse(*directive,
                              "portico's error pages keep the original status (no =CODE)");
            refused = true;
        } else if (!uri.starts_with("/")) {
            conversion.refuse(*directive,
                              "portico's error page is a URI of this site (not a "
                              "named location or a URL)");
            refused = true;
        } else if (std::string why = template_refusal(uri); !why.empty()) {
            conversion.refuse(*directive, why);
            refused = true;
        }
        if (refused) continue;
        for (size_t i = 0; i + 1 < directive->args.size(); ++i) {
            const std::string& status = directive->args[i];
            if (status.find_first_not_of("0123456789") != std::string::npos) {
                conversion.refuse(*directive, "not a status: " + status);
                break;
            }
            if (std::find(statuses.begin(), statuses.end(), status) != statuses.end()) continue;
            statuses.push_back(status);
            pages.emplace_back(status, toml_string(uri));
        }
    }
    if (pages.empty()) return;
    location.entries.set("error_pages", toml_inline_table(pages));
    if (has_proxy && !is_on(last_in(scope, "proxy_intercept_errors"))) {
        std::string list;
        for (const std::string& status : statuses) list += (list.empty() ? "" : ", ") + status;
        conversion.note(location, *found->second.front(),
                        "portico's error pages also replace the app's own " + list +
                            " responses (nginx: proxy_intercept_errors off)");
    }
}

}  // namespace

void translate_response_options(Conversion& conversion, const Scope& scope, bool has_files,
                                bool has_proxy, Table& location) {
    std::string regex;
    if (const std::string* pattern = location.entries.get("regex"))
        regex = pattern->substr(1, pattern->size() - 2);
    headers(conversion, scope, regex, location);
    if (has_files || has_proxy) {
        expires(conversion, scope, location);
        compression(conversion, scope, location);
    }
    if (has_files) precompressed(conversion, scope, location);
    error_pages(conversion, scope, has_proxy, location);
}

}  // namespace portico::convert
