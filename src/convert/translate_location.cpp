// location (=, ^~, ~, ~*, prefix, @named), root, alias, index, try_files,
// return, rewrite.
#include <algorithm>
#include <filesystem>
#include <map>

#include "convert/conversion.hpp"
#include "convert/nginx_values.hpp"
#include "convert/toml_text.hpp"

namespace portico::convert {

namespace {

bool is_redirect_status(int status) {
    return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

// nginx answers `return 404;` with its error page; portico's respond
// says the status in text, as its own errors do.
std::string own_error_text(int status) {
    static const std::map<int, const char*> reasons{
        {400, "Bad Request"},         {401, "Unauthorized"},          {403, "Forbidden"},
        {404, "Not Found"},           {405, "Method Not Allowed"},    {410, "Gone"},
        {429, "Too Many Requests"},   {500, "Internal Server Error"}, {502, "Bad Gateway"},
        {503, "Service Unavailable"}, {504, "Gateway Timeout"}};
    auto found = reasons.find(status);
    return found == reasons.end() ? "" : std::to_string(status) + " " + found->second + "\n";
}

bool looks_like_url(const std::string& text) {
    return text.starts_with("http://") || text.starts_with("https://") ||
           text.starts_with("$scheme");
}

// The match of a location: its keys, and the regex its captures come from.
struct Match {
    bool ok = false;
    bool named = false;
    bool prefix = false;
    std::string regex;  // for captures in templates
};

Match translate_match(Conversion& conversion, const Directive& location, Table& table) {
    Match match;
    const std::vector<std::string>& args = location.args;
    if (args.size() == 1 && args[0].starts_with("@")) {
        match.named = true;
        match.ok = true;
        return match;
    }
    std::string modifier = args.size() == 2 ? args[0] : "";
    std::string text = args.back();
    if (args.size() > 2 || args.empty()) {
        conversion.refuse(location, "unexpected location arguments");
        return match;
    }
    if (modifier == "" || modifier == "^~") {
        table.entries.set("prefix", toml_string(text));
        if (modifier == "^~") table.entries.set("stop_regex", "true");
        match.prefix = true;
    } else if (modifier == "=") {
        table.entries.set("exact", toml_string(text));
    } else if (modifier == "~" || modifier == "~*") {
        std::string pattern = modifier == "~*" ? "(?i)" + text : text;
        if (std::string why = re2_refusal(pattern); !why.empty()) {
            conversion.refuse(location, why);
            return match;
        }
        table.entries.set("regex", toml_literal(pattern));
        match.regex = pattern;
    } else {
        conversion.refuse(location, "unknown location modifier " + modifier);
        return match;
    }
    match.ok = true;
    return match;
}

// The rewrite rules of a location, in order: portico's first matching rule
// ends the location's rules, nginx's flagless one goes on to the next, so
// only a flagless rule that is the last one translates.
void translate_rewrites(Conversion& conversion, const std::vector<const Directive*>& rewrites,
                        Table& location) {
    std::vector<std::string> rules;
    for (size_t i = 0; i < rewrites.size(); ++i) {
        const Directive& rewrite = *rewrites[i];
        if (!conversion.arity(rewrite, 2, 3)) return;
        std::string flag = rewrite.args.size() == 3 ? rewrite.args[2] : "";
        if (flag.empty() && i + 1 < rewrites.size() && !looks_like_url(rewrite.args[1])) {
            conversion.refuse(rewrite,
                              "a rewrite without a flag goes on to the next rule in "
                              "nginx; portico stops at the first match (add last)");
            return;
        }
        if (!flag.empty() && flag != "last" && flag != "break" && flag != "redirect" &&
            flag != "permanent") {
            conversion.refuse(rewrite, "unknown flag " + flag);
            return;
        }
        if (std::string why = re2_refusal(rewrite.args[0]); !why.empty()) {
            conversion.refuse(rewrite, why);
            return;
        }
        if (std::string why = template_refusal(rewrite.args[1], rewrite.args[0]); !why.empty()) {
            conversion.refuse(rewrite, why);
            return;
        }
        std::vector<std::pair<std::string, std::string>> rule{
            {"from", toml_literal(rewrite.args[0])}, {"to", toml_string(rewrite.args[1])}};
        if (!flag.empty() && flag != "last") rule.emplace_back("flag", toml_string(flag));
        rules.push_back(toml_inline_table(rule));
    }
    std::string out = "[";
    for (size_t i = 0; i < rules.size(); ++i) out += (i ? ", " : "") + rules[i];
    location.entries.set("rewrite", out + "]");
}

// root / alias / index / try_files. False when the location serves no
// files (no root in force, or it cannot be used).
bool translate_files(Conversion& conversion, const Directive& location_block, const Scope& scope,
                     const Match& match, Table& location) {
    const Directive* alias = nullptr;
    for (const Directive& directive : location_block.block) {
        if (directive.name == "alias") alias = &directive;
    }
    if (alias) {
        if (!conversion.arity(*alias, 1, 1)) return false;
        if (!match.regex.empty()) {
            conversion.refuse(*alias,
                              "alias in a regex location builds its path from captures; "
                              "portico takes root or a prefix location");
            return false;
        }
        location.entries.set("alias", toml_string(conversion.absolute(alias->args[0])));
    } else {
        const Directive* root = last_in(scope, "root");
        std::string folder = root && root->args.size() == 1 ? conversion.absolute(root->args[0])
                                                            : conversion.absolute("html");
        std::error_code error;
        if (!std::filesystem::is_directory(folder, error)) {
            if (root) conversion.refuse(*root, "the root " + folder + " is not a directory here");
            return false;
        }
        location.entries.set("root", toml_string(folder));
    }
    if (const Directive* index = last_in(scope, "index")) {
        std::vector<std::string> names;
        for (const std::string& name : index->args) {
            if (name.find('$') != std::string::npos || name.find('/') != std::string::npos) {
                conversion.refuse(*index, "portico's index names files in the folder");
                return true;
            }
            names.push_back(name);
        }
        if (names != std::vector<std::string>{"index.html"})
            location.entries.set("index", toml_string_array(names));
    }
    return true;
}

const Directive* own(const Directive& location, const std::string& name) {
    const Directive* found = nullptr;
    for (const Directive& directive : location.block) {
        if (directive.name == name) found = &directive;
    }
    return found;
}

// try_files: the entries, with a last "@NAME" made into portico's
// upstream name (root + proxy for the classic `$uri @app`).
void translate_try_files(Conversion& conversion, const Directive& try_files,
                         const std::vector<const Directive*>& named, const Scope& server_scope,
                         Table& location) {
    std::vector<std::string> entries = try_files.args;
    if (entries.size() < 2) return conversion.refuse(try_files, "needs a file and a fallback");
    for (const std::string& entry : entries) {
        if (entry.starts_with("@") || entry.starts_with("=")) continue;
        if (std::string why = template_refusal(entry); !why.empty())
            return conversion.refuse(try_files, why);
    }
    std::string& last = entries.back();
    if (last.starts_with("@")) {
        auto found = std::find_if(named.begin(), named.end(),
                                  [&](const Directive* block) { return block->args[0] == last; });
        if (found == named.end())
            return conversion.refuse(try_files, "no location " + last + " in this server");
        const Directive* pass = own(**found, "proxy_pass");
        if (!pass)
            return conversion.refuse(
                try_files, "the location " + last + " must hold a proxy_pass to translate");
        Scope named_scope = scope_of(server_scope, (*found)->block);
        refuse_cache_in_fallback(conversion, named_scope);
        conversion.note(location, **found, "the named location's proxy_pass and its headers, here");
        std::string upstream =
            translate_proxy(conversion, *pass, named_scope, ProxyUse::try_files_fallback, location);
        if (upstream.empty()) return;
        last = "@" + upstream;
    }
    location.entries.set("try_files", toml_string_array(entries));
}

}  // namespace

void translate_location_return(Conversion& conversion, const Directive& directive,
                               Table& location) {
    if (!conversion.arity(directive, 1, 2)) return;
    const std::vector<std::string>& args = directive.args;
    int status = 0;
    std::string text;
    if (args.size() == 1 && looks_like_url(args[0])) {
        status = 302;
        text = args[0];
    } else {
        if (args[0].find_first_not_of("0123456789") != std::string::npos)
            return conversion.refuse(directive, "expects a status code or a URL");
        status = std::stoi(args[0]);
        if (args.size() == 2) text = args[1];
    }
    if (std::string why = template_refusal(text, ""); !why.empty())
        return conversion.refuse(directive, why);
    if (is_redirect_status(status)) {
        location.entries.set("redirect", toml_inline_table({{"to", toml_string(text)},
                                                            {"status", std::to_string(status)}}));
        return;
    }
    if (status < 100 || (status > 599 && status != 444))
        return conversion.refuse(directive, "status outside 100..599");
    if (text.find('$') != std::string::npos)
        return conversion.refuse(directive, "portico's respond body is literal text");
    std::vector<std::pair<std::string, std::string>> respond{{"status", std::to_string(status)}};
    if (text.empty()) text = own_error_text(status);
    if (!text.empty()) respond.emplace_back("body", toml_string(text));
    location.entries.set("respond", toml_inline_table(respond));
    if (status != 444) {
        conversion.note(location, directive,
                        text.empty() ? "portico's own text body for the status, where nginx "
                                       "sends its HTML page"
                                     : "the body goes out as text/plain (nginx: default_type)");
    }
}

void translate_locations(Conversion& conversion, const Directive& server, const Scope& server_scope,
                         SiteTable& site) {
    std::vector<const Directive*> named;
    for (const Directive& directive : server.block) {
        if (directive.name == "location" && directive.args.size() == 1 &&
            directive.args[0].starts_with("@"))
            named.push_back(&directive);
    }
    bool has_root_prefix = false;
    for (const Directive& block : server.block) {
        if (block.name != "location") continue;
        Table location;
        location.comments.push_back(Conversion::origin(block));
        Match match = translate_match(conversion, block, location);
        if (!match.ok || match.named) continue;  // named ones are used by try_files
        if (match.prefix && block.args.back() == "/") has_root_prefix = true;
        Scope scope = scope_of(server_scope, block.block);
        translate_globals(conversion, scope);

        const Directive* answer = nullptr;
        const Directive* proxy_pass = nullptr;
        const Directive* try_files = nullptr;
        std::vector<const Directive*> rewrites;
        for (const Directive& directive : block.block) {
            const std::string& name = directive.name;
            if (name == "return") {
                if (!answer) answer = &directive;
            } else if (name == "proxy_pass") {
                proxy_pass = &directive;
            } else if (name == "try_files") {
                try_files = &directive;
            } else if (name == "rewrite") {
                rewrites.push_back(&directive);
            } else if (name == "alias") {
                continue;
            } else if (is_inherited(name)) {
                drop_or_refuse(conversion, location, directive);
            } else if (name == "location") {
                conversion.refuse(directive, "nested locations: write them at the server level");
            } else if (name == "if") {
                conversion.refuse(directive, "portico has no if inside a location");
            } else if (!drop_or_refuse(conversion, location, directive)) {
                conversion.refuse(directive, "unknown or unsupported in a location");
            }
        }
        if (answer && !rewrites.empty()) {
            conversion.refuse(*answer,
                              "a return after rewrites: portico's location holds one "
                              "or the other");
            answer = nullptr;
        }
        bool has_files = false, has_proxy = false;
        if (answer) {
            translate_location_return(conversion, *answer, location);
        } else {
            if (!rewrites.empty()) translate_rewrites(conversion, rewrites, location);
            if (proxy_pass) {
                if (try_files)
                    conversion.refuse(*try_files, "try_files with proxy_pass in one location");
                translate_proxy(conversion, *proxy_pass, scope,
                                match.prefix ? ProxyUse::prefix_location : ProxyUse::other_location,
                                location);
                has_proxy = location.entries.get("proxy") != nullptr;
            } else if (rewrites.empty() || try_files || own(block, "root") || own(block, "alias")) {
                has_files = translate_files(conversion, block, scope, match, location);
                if (has_files && try_files)
                    translate_try_files(conversion, *try_files, named, server_scope, location);
                has_proxy = location.entries.get("try_files") &&
                            location.entries.get("try_files")->find("\"@") != std::string::npos;
            }
        }
        if (!answer && !has_files && !has_proxy && rewrites.empty()) {
            location.entries.set("respond", "{ status = 404 }");
            conversion.note(location, block, "no root here: every request gets 404, as in nginx");
        }
        // add_header applies to a return's answer too (nginx's header filter).
        translate_response_options(conversion, scope, has_files, has_proxy, location);
        translate_access(conversion, scope, location);
        if (location.entries.get("proxy")) translate_cache(conversion, scope, location);
        site.locations.push_back(std::move(location));
    }
    if (!has_root_prefix) {
        // What no location matches, nginx serves from the server's root.
        Table location;
        location.comments.push_back(Conversion::origin(server) +
                                    ": what no location matches (the server's own root)");
        location.entries.set("prefix", toml_string("/"));
        Match match{true, false, true, ""};
        static const Directive empty;
        bool has_files = translate_files(conversion, empty, server_scope, match, location);
        if (!has_files) {
            location.entries.set("respond", "{ status = 404 }");
            location.comments.push_back("no root: 404 for every path, as nginx's missing html/");
        }
        translate_response_options(conversion, server_scope, has_files, false, location);
        translate_access(conversion, server_scope, location);
        site.locations.push_back(std::move(location));
    }
}

}  // namespace portico::convert
