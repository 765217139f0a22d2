// proxy_pass (with and without a path, to an upstream block, a host or
// unix:), proxy_set_header, proxy_hide_header, proxy_http_version and the
// proxy timeouts, written so that the app receives what nginx sent it.
#include <algorithm>
#include <array>
#include <cctype>

#include "convert/conversion.hpp"
#include "convert/nginx_values.hpp"
#include "convert/toml_text.hpp"

namespace portico::convert {

namespace {

std::string lowercase(std::string text) {
    for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
}

// The headers portico adds to every proxied request by default; nginx sends
// them only when the config says so.
constexpr std::array<const char*, 5> portico_defaults{
    "X-Forwarded-For", "X-Forwarded-Proto", "X-Forwarded-Host", "X-Real-IP", "X-Request-ID"};

struct Target {
    bool ok = false;
    std::string upstream;    // a named upstream (block or generated), or empty
    std::string url;         // "http://host:port/path" for an inline upstream
    std::string proxy_host;  // nginx's $proxy_host: the Host it sends by default
    std::string path;
};

std::string upstream_name_for(const std::string& address) {
    std::string name;
    for (char c : address) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    return name;
}

// [upstream.NAME] for one server, made for what portico keeps per upstream
// (timeouts, a unix: socket).
std::string generated_upstream(Conversion& conversion, const Directive& pass,
                               const std::string& server) {
    std::string name = upstream_name_for(server);
    if (!conversion.out.upstream(name)) {
        Table table;
        table.comments.push_back(Conversion::origin(pass) + " (its server as an upstream)");
        table.entries.set("servers", toml_string_array({server}));
        conversion.out.upstreams.emplace_back(name, std::move(table));
    }
    return name;
}

Target read_target(Conversion& conversion, const Directive& pass, bool wants_upstream) {
    Target target;
    if (!conversion.arity(pass, 1, 1)) return target;
    const std::string& url = pass.args[0];
    if (url.find('$') != std::string::npos) {
        conversion.refuse(pass, "a proxy_pass with variables has no equivalent");
        return target;
    }
    if (!url.starts_with("http://")) {
        conversion.refuse(pass, "portico proxies to http:// upstreams");
        return target;
    }
    std::string rest = url.substr(7);
    if (rest.starts_with("unix:")) {
        size_t colon = rest.find(':', 5);
        std::string socket =
            rest.substr(5, colon == std::string::npos ? std::string::npos : colon - 5);
        target.path = colon == std::string::npos ? "" : rest.substr(colon + 1);
        target.upstream =
            generated_upstream(conversion, pass, "unix:" + conversion.absolute(socket));
        target.proxy_host = "localhost";
        target.ok = true;
        return target;
    }
    size_t slash = rest.find('/');
    std::string host = rest.substr(0, slash);
    target.path = slash == std::string::npos ? "" : rest.substr(slash);
    target.proxy_host = host;
    if (conversion.is_upstream_block(host)) {
        target.upstream = host;
    } else {
        bool has_port = host.find(':') != std::string::npos && !host.ends_with(']');
        std::string address = has_port ? host : host + ":80";
        if (wants_upstream)
            target.upstream = generated_upstream(conversion, pass, address);
        else
            target.url = "http://" + address;
    }
    target.ok = true;
    return target;
}

struct HeaderPlan {
    std::vector<std::pair<std::string, std::string>> set;  // name, rendered template
    bool host_set = false;
    bool client_host = false;  // Host $http_host: the client's, as received
    bool upgrade = false, connection_upgrade = false;
    bool ok = true;
};

HeaderPlan plan_headers(Conversion& conversion, const Scope& scope, const std::string& regex,
                        Table& location) {
    HeaderPlan plan;
    auto found = scope.find("proxy_set_header");
    if (found == scope.end()) return plan;
    for (const Directive* directive : found->second) {
        if (directive->args.size() != 2) {
            conversion.refuse(*directive, "expects a name and a value");
            continue;
        }
        const std::string& name = directive->args[0];
        const std::string& value = directive->args[1];
        std::string lower = lowercase(name);
        if (lower == "host") {
            plan.host_set = true;
            if (value == "$http_host") {
                plan.client_host = true;
                continue;
            }
        } else if (lower == "upgrade" && value == "$http_upgrade") {
            plan.upgrade = true;
            conversion.note(location, *directive,
                            "dropped: websocket = true passes the upgrade on");
            continue;
        } else if (lower == "connection") {
            std::string v = lowercase(value);
            if (v == "upgrade" || value == "$connection_upgrade") {
                plan.connection_upgrade = true;
                conversion.note(location, *directive,
                                "dropped: websocket = true passes the upgrade on");
            } else if (v.empty() || v == "keep-alive") {
                conversion.note(location, *directive,
                                "dropped: portico keeps upstream connections alive by itself");
            } else {
                conversion.refuse(*directive, "Connection is portico's to set upstream");
            }
            continue;
        } else if (lower == "x-forwarded-for" && value == "$proxy_add_x_forwarded_for") {
            conversion.note(location, *directive, "dropped: portico sends X-Forwarded-For so");
            plan.set.emplace_back("X-Forwarded-For", "");  // marks it as sent: not removed
            continue;
        } else if (lower == "content-length" || lower == "transfer-encoding") {
            conversion.refuse(*directive, "the body's framing is portico's to set");
            continue;
        }
        if (std::string why = template_refusal(value, regex); !why.empty()) {
            conversion.refuse(*directive, why);
            plan.ok = false;
            continue;
        }
        plan.set.emplace_back(name, toml_string(value));
    }
    return plan;
}

bool is_set(const HeaderPlan& plan, const std::string& name) {
    return std::any_of(plan.set.begin(), plan.set.end(), [&](const auto& entry) {
        return lowercase(entry.first) == lowercase(name);
    });
}

void set_timeouts(Conversion& conversion, const Scope& scope, const std::string& upstream,
                  Table& location) {
    static const std::array<std::pair<const char*, const char*>, 3> timeouts{
        {{"proxy_connect_timeout", "connect_timeout"},
         {"proxy_read_timeout", "read_timeout"},
         {"proxy_send_timeout", "send_timeout"}}};
    for (const auto& [nginx_name, key] : timeouts) {
        const Directive* directive = last_in(scope, nginx_name);
        if (!directive) continue;
        std::optional<std::string> duration =
            directive->args.size() == 1 ? portico_duration(directive->args[0]) : std::nullopt;
        if (!duration) {
            conversion.refuse(*directive, "expects a time");
            continue;
        }
        Table* table = conversion.out.upstream(upstream);
        if (!table) {
            conversion.refuse(*directive,
                              "portico's timeouts belong to an upstream: a proxy_pass "
                              "with a path uses an inline one");
            continue;
        }
        const std::string* current = table->entries.get(key);
        if (current && *current != toml_string(*duration)) {
            conversion.refuse(*directive, std::string("portico's ") + key +
                                              " is one per upstream, and another location "
                                              "set " +
                                              *current);
            continue;
        }
        table->entries.set(key, toml_string(*duration));
        conversion.note(location, *directive, std::string("written as the upstream's ") + key);
    }
}

// portico takes a path only with an http://host:port target: an upstream
// block of one TCP server becomes that server inline (its pool settings
// then portico's defaults, said in a comment); a pool of several is refused.
bool inline_single_server(Conversion& conversion, const Directive& pass, Target& target,
                          Table& location) {
    const Table* upstream = conversion.out.upstream(target.upstream);
    const std::string* servers = upstream ? upstream->entries.get("servers") : nullptr;
    bool single = servers && servers->find("\", \"") == std::string::npos && servers->size() > 4 &&
                  servers->find("unix:") == std::string::npos;
    if (!single) {
        conversion.refuse(pass,
                          "portico takes a path with an http://host:port target, not with "
                          "an upstream of several servers or a unix: one");
        return false;
    }
    target.url = "http://" + servers->substr(2, servers->size() - 4);
    conversion.note(location, pass,
                    "the upstream's one server inline, as portico takes a path only with "
                    "http://host:port (pooled with portico's defaults)");
    target.upstream.clear();
    return true;
}

bool has_timeouts(const Scope& scope) {
    return last_in(scope, "proxy_connect_timeout") || last_in(scope, "proxy_read_timeout") ||
           last_in(scope, "proxy_send_timeout");
}

}  // namespace

std::string translate_proxy(Conversion& conversion, const Directive& pass, const Scope& scope,
                            ProxyUse use, Table& location) {
    std::string regex;
    if (const std::string* pattern = location.entries.get("regex")) {
        regex = pattern->substr(1, pattern->size() - 2);
    }
    bool fallback = use == ProxyUse::try_files_fallback;
    Target target = read_target(conversion, pass, fallback || has_timeouts(scope));
    if (!target.ok) return "";
    bool path_allowed = use == ProxyUse::prefix_location;
    std::string prefix;
    if (const std::string* text = location.entries.get("prefix"))
        prefix = text->substr(1, text->size() - 2);
    if (!target.path.empty() && target.path != prefix) {
        if (!path_allowed) {
            conversion.refuse(pass, "a URI in proxy_pass outside a prefix location");
            return "";
        }
        if (!target.upstream.empty() && !inline_single_server(conversion, pass, target, location))
            return "";
    }
    std::string path = target.path == prefix ? "" : target.path;
    if (!fallback) {
        location.entries.set(
            "proxy", toml_string(target.upstream.empty() ? target.url + path : target.upstream));
    }
    HeaderPlan plan = plan_headers(conversion, scope, regex, location);
    std::vector<std::pair<std::string, std::string>> headers;
    for (const auto& [name, value] : plan.set) {
        if (!value.empty()) headers.emplace_back(name, value);
    }
    if (!plan.host_set) {
        // nginx sends $proxy_host. portico's preserve_host = false sends the
        // same for an inline http://host:port and for an upstream block's
        // name; not for an upstream generated from an address or a socket,
        // whose name is not what nginx sends.
        bool same = target.upstream.empty() ? target.url == "http://" + target.proxy_host
                                            : target.upstream == target.proxy_host;
        if (same)
            location.entries.set("preserve_host", "false");
        else
            headers.insert(headers.begin(), {"Host", toml_string(target.proxy_host)});
    }
    for (const char* name : portico_defaults) {
        if (!is_set(plan, name)) headers.emplace_back(name, toml_string(""));
    }
    if (!headers.empty()) location.entries.set("proxy_headers", toml_inline_table(headers));
    const Directive* version = last_in(scope, "proxy_http_version");
    bool http11 = version && version->args == std::vector<std::string>{"1.1"};
    if (version)
        conversion.note(location, *version, "dropped: portico speaks HTTP/1.1 upstream, pooled");
    if (!(plan.upgrade && plan.connection_upgrade && http11))
        location.entries.set("websocket", "false");
    if (auto hidden = scope.find("proxy_hide_header");
        hidden != scope.end() && !hidden->second.empty()) {
        std::vector<std::string> names;
        for (const Directive* directive : hidden->second) {
            if (directive->args.size() == 1) names.push_back(directive->args[0]);
        }
        location.entries.set("hide_headers", toml_string_array(names));
    }
    // Refused where the proxy has no upstream of its own to carry them.
    set_timeouts(conversion, scope, target.upstream, location);
    return target.upstream;
}

}  // namespace portico::convert
