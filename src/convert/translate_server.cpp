// server, listen, server_name, ssl_*, http2, and the server-level forms of
// return and `if` that have an exact equivalent.
#include <algorithm>

#include "convert/conversion.hpp"
#include "convert/nginx_values.hpp"
#include "convert/toml_text.hpp"

namespace portico::convert {

namespace {

// "80" -> "0.0.0.0:80", "[::]:80" stays, "127.0.0.1" -> ":80"; empty on a
// form portico cannot listen on (a host name, unix:).
std::string listen_address(const std::string& text) {
    if (text.starts_with("unix:")) return "";
    if (text.find_first_not_of("0123456789") == std::string::npos) return "0.0.0.0:" + text;
    if (text.starts_with("[")) {
        size_t close = text.find(']');
        if (close == std::string::npos) return "";
        return close + 1 == text.size() ? text + ":80" : text;
    }
    if (text == "*") return "0.0.0.0:80";
    if (text.starts_with("*:")) return "0.0.0.0" + text.substr(1);
    size_t colon = text.rfind(':');
    std::string host = colon == std::string::npos ? text : text.substr(0, colon);
    std::string port = colon == std::string::npos ? "80" : text.substr(colon + 1);
    if (host == "localhost") host = "127.0.0.1";
    if (host.find_first_not_of("0123456789.") != std::string::npos) return "";
    return host + ":" + port;
}

struct ServerListen {
    std::string address;
    bool tls = false;
    bool default_server = false;
};

Listener& listener_for(Conversion& conversion, const std::string& address, const Directive& line) {
    for (Listener& listener : conversion.listeners) {
        if (listener.address == address) return listener;
    }
    conversion.listeners.push_back({address, false, false, false, &line});
    return conversion.listeners.back();
}

std::vector<ServerListen> read_listens(Conversion& conversion, const Directive& server,
                                       const Scope& scope, Table& site) {
    std::vector<ServerListen> out;
    bool ssl_on = false;
    for (const Directive& directive : server.block) {
        if (directive.name == "ssl" && directive.args == std::vector<std::string>{"on"})
            ssl_on = true;
    }
    const Directive* http2_directive = last_in(scope, "http2");
    bool http2_on =
        http2_directive && !http2_directive->args.empty() && http2_directive->args[0] == "on";
    for (const Directive& directive : server.block) {
        if (directive.name != "listen" || directive.args.empty()) continue;
        std::string address = listen_address(directive.args[0]);
        if (address.empty()) {
            conversion.refuse(directive, "portico listens on IP addresses and ports only");
            continue;
        }
        ServerListen listen{address, ssl_on, false};
        bool http2 = http2_on, proxy_protocol = false, refused = false;
        for (size_t i = 1; i < directive.args.size(); ++i) {
            const std::string& option = directive.args[i];
            if (option == "ssl") {
                listen.tls = true;
            } else if (option == "http2") {
                http2 = true;
            } else if (option == "default_server" || option == "default") {
                listen.default_server = true;
            } else if (option == "proxy_protocol") {
                proxy_protocol = true;
            } else if (option == "reuseport" || option.starts_with("backlog=") ||
                       option.starts_with("ipv6only=") || option == "deferred" ||
                       option.starts_with("so_keepalive=") || option.starts_with("rcvbuf=") ||
                       option.starts_with("sndbuf=") || option == "fastopen") {
                conversion.note(site, directive,
                                "the socket option " + option + " is dropped (portico's own)");
            } else {
                conversion.refuse(directive, "the listen option " + option + " has no equivalent");
                refused = true;
            }
        }
        if (refused) continue;
        Listener& listener = listener_for(conversion, address, directive);
        if (listener.first != &directive &&
            (listener.tls != listen.tls || listener.proxy_protocol != proxy_protocol)) {
            conversion.refuse(directive, "another server listens on " + address +
                                             " with other ssl/proxy_protocol options");
            continue;
        }
        listener.tls = listen.tls;
        listener.proxy_protocol = proxy_protocol;
        listener.http2 = listener.http2 || http2;
        out.push_back(listen);
    }
    if (out.empty()) {
        // nginx's default: listen *:80 (8000 when not root; configs mean 80).
        static const Directive implicit{"listen", {"80"}, false, {}, {"(default)", 0}};
        Listener& listener = listener_for(conversion, "0.0.0.0:80", implicit);
        out.push_back({listener.address, listener.tls, false});
    }
    return out;
}

void read_names(Conversion& conversion, const Directive& server, Table& site) {
    std::vector<std::string> names;
    for (const Directive& directive : server.block) {
        if (directive.name != "server_name") continue;
        for (const std::string& name : directive.args) {
            if (name == "_" || name.empty() || name == "\"\"") continue;
            if (name.starts_with("~")) {
                if (std::string why = re2_refusal(name.substr(1)); !why.empty()) {
                    conversion.refuse(directive, why);
                    continue;
                }
                names.push_back(name);
            } else if (name.starts_with(".")) {
                names.push_back(name.substr(1));  // nginx: the name and its subdomains
                names.push_back("*" + name);
            } else if (name.ends_with(".*") || name.find('$') != std::string::npos) {
                conversion.refuse(directive, "the name " + name + " has no portico form");
            } else {
                names.push_back(name);
            }
        }
    }
    std::vector<std::string> unique;
    for (std::string& name : names) {
        if (std::find(unique.begin(), unique.end(), name) == unique.end())
            unique.push_back(std::move(name));
    }
    site.entries.set("names", toml_string_array(unique));
}

void read_certificate(Conversion& conversion, const Scope& scope, Table& site, bool has_tls) {
    const Directive* cert = last_in(scope, "ssl_certificate");
    const Directive* key = last_in(scope, "ssl_certificate_key");
    if (!has_tls) return;
    if (!cert || !key || cert->args.size() != 1 || key->args.size() != 1) {
        const Directive* where = cert ? cert : key;
        if (where) conversion.refuse(*where, "a TLS server needs one ssl_certificate and its key");
        return;
    }
    if (scope.at("ssl_certificate").size() > 1) {
        conversion.refuse(*scope.at("ssl_certificate").front(),
                          "portico takes one certificate per site (the first is used)");
    }
    std::string entry = toml_inline_table(
        {{"cert", toml_string(conversion.absolute(scope.at("ssl_certificate").front()->args[0]))},
         {"key",
          toml_string(conversion.absolute(scope.at("ssl_certificate_key").front()->args[0]))}});
    site.entries.set("certificate", entry);
    if (std::find(conversion.certificates.begin(), conversion.certificates.end(), entry) ==
        conversion.certificates.end())
        conversion.certificates.push_back(entry);
    if (const Directive* protocols = last_in(scope, "ssl_protocols")) {
        std::vector<std::string> kept;
        for (const std::string& protocol : protocols->args) {
            if (protocol == "TLSv1.2" || protocol == "TLSv1.3") kept.push_back(protocol);
        }
        if (kept.size() != protocols->args.size())
            conversion.note(site, *protocols,
                            "TLSv1, TLSv1.1 and SSLv3 are refused by portico: "
                            "only TLSv1.2/TLSv1.3 kept");
        if (kept.empty()) return conversion.refuse(*protocols, "no protocol portico offers");
        conversion.set_global(conversion.out.tls, "protocols", toml_string_array(kept), protocols);
    }
    if (const Directive* ciphers = last_in(scope, "ssl_ciphers");
        ciphers && ciphers->args.size() == 1)
        conversion.set_global(conversion.out.tls, "ciphers", toml_string(ciphers->args[0]),
                              ciphers);
}

// `if ($scheme = http) { return ...; }` and `if ($host = NAME) { return ...; }`:
// the condition and the one return inside, else null.
struct ExactIf {
    std::string variable, value;
    const Directive* answer = nullptr;
};

std::optional<ExactIf> exact_if(const Directive& directive) {
    if (directive.args.size() != 3 || directive.args[1] != "=") return std::nullopt;
    const std::string& variable = directive.args[0];
    if (variable != "($scheme" && variable != "($host") return std::nullopt;
    std::string value = directive.args[2];
    if (!value.ends_with(')')) return std::nullopt;
    value.pop_back();
    if (directive.block.size() != 1 || directive.block[0].name != "return") return std::nullopt;
    return ExactIf{variable.substr(2), value, &directive.block[0]};
}

SiteTable& new_site(Conversion& conversion, const Directive& server) {
    conversion.out.sites.emplace_back();
    SiteTable& site = conversion.out.sites.back();
    site.site.comments.push_back(Conversion::origin(server) + " { ... }");
    return site;
}

std::vector<std::string> addresses(const std::vector<ServerListen>& listens, int tls) {
    std::vector<std::string> out;
    for (const ServerListen& listen : listens) {
        if (tls < 0 || listen.tls == (tls == 1)) out.push_back(listen.address);
    }
    return out;
}

// A site whose every request gets the `return` (server-level return, or the
// redirect half of an exact `if`): nginx runs it before any location, so
// before limits and access rules too.
void answer_everything(Conversion& conversion, SiteTable& site, const Directive& answer) {
    Table location;
    location.comments.push_back(Conversion::origin(answer) + " (for every path)");
    location.entries.set("prefix", toml_string("/"));
    translate_location_return(conversion, answer, location);
    site.locations.push_back(std::move(location));
}

void set_listen(SiteTable& site, const std::vector<std::string>& listen, bool is_default) {
    site.site.entries.set("listen", toml_string_array(listen));
    if (is_default) site.site.entries.set("default", "true");
}

}  // namespace

void translate_server(Conversion& conversion, const Directive& server, const Scope& http_scope) {
    Scope scope = scope_of(http_scope, server.block);
    size_t site_index = conversion.out.sites.size();
    // `site` below stays valid: the ifs that add sites of their own are
    // counted in.
    size_t ifs = std::count_if(server.block.begin(), server.block.end(),
                               [](const Directive& d) { return d.name == "if"; });
    conversion.out.sites.reserve(site_index + 1 + ifs);
    new_site(conversion, server);
    Table& site = conversion.out.sites[site_index].site;
    std::vector<ServerListen> listens = read_listens(conversion, server, scope, site);
    bool is_default = std::any_of(listens.begin(), listens.end(),
                                  [](const ServerListen& l) { return l.default_server; });
    bool has_tls =
        std::any_of(listens.begin(), listens.end(), [](const ServerListen& l) { return l.tls; });
    read_names(conversion, server, site);
    read_certificate(conversion, scope, site, has_tls);
    set_listen(conversion.out.sites[site_index], addresses(listens, -1), is_default);
    translate_globals(conversion, scope);

    const Directive* server_return = nullptr;
    for (const Directive& directive : server.block) {
        const std::string& name = directive.name;
        if (name == "listen" || name == "server_name" || name == "location" || name == "ssl") {
            continue;
        } else if (is_inherited(name)) {
            drop_or_refuse(conversion, site, directive);
        } else if (name == "return") {
            if (!server_return) server_return = &directive;
        } else if (name == "set_real_ip_from" || name == "real_ip_header") {
            translate_real_ip_directive(conversion, directive);
        } else if (name == "if") {
            std::optional<ExactIf> condition = exact_if(directive);
            if (!condition) {
                conversion.refuse(directive,
                                  "portico has no if; only `if ($scheme = http)` and "
                                  "`if ($host = NAME)` around one return translate");
                continue;
            }
            if (condition->variable == "scheme") {
                if (condition->value != "http" && condition->value != "https") {
                    conversion.refuse(directive, "$scheme is http or https");
                    continue;
                }
                std::vector<std::string> matching =
                    addresses(listens, condition->value == "https" ? 1 : 0);
                if (matching.empty()) {
                    conversion.note(site, directive,
                                    "dropped: no listener of the server has that "
                                    "scheme, so it never applies");
                    continue;
                }
                SiteTable& redirecting = conversion.out.sites.emplace_back();
                redirecting.site = conversion.out.sites[site_index].site;
                redirecting.site.comments = {Conversion::origin(directive) + " { ... }"};
                std::erase_if(redirecting.site.entries.items, [&](const auto& entry) {
                    return entry.first == "certificate" && condition->value == "http";
                });
                set_listen(redirecting, matching, is_default);
                answer_everything(conversion, redirecting, *condition->answer);
                std::vector<std::string> rest =
                    addresses(listens, condition->value == "https" ? 0 : 1);
                if (rest.empty()) {
                    // Everything is redirected: the server itself serves nothing.
                    conversion.out.sites.erase(conversion.out.sites.begin() + site_index);
                    return;
                }
                set_listen(conversion.out.sites[site_index], rest, is_default);
            } else {
                // $host: the name leaves this site for one of its own.
                Table& original = conversion.out.sites[site_index].site;
                std::string names = *original.entries.get("names");
                std::string quoted = toml_string(condition->value);
                size_t at = names.find(quoted);
                if (at == std::string::npos) {
                    conversion.refuse(directive, "the host " + condition->value +
                                                     " is not one of the server's names");
                    continue;
                }
                names.erase(at, quoted.size());
                // "[a, , b]" / "[, b]" / "[a, ]" -> tidy separators.
                for (std::string bad : {", , ", "[, ", ", ]"}) {
                    size_t pos = names.find(bad);
                    if (pos != std::string::npos)
                        names.replace(pos, bad.size(),
                                      bad == ", , " ? ", " : (bad == "[, " ? "[" : "]"));
                }
                original.entries.set("names", names);
                SiteTable& redirecting = conversion.out.sites.emplace_back();
                redirecting.site.comments = {Conversion::origin(directive) + " { ... }"};
                redirecting.site.entries.set("names", toml_string_array({condition->value}));
                set_listen(redirecting, addresses(listens, -1), false);
                if (const std::string* certificate = original.entries.get("certificate"))
                    redirecting.site.entries.set("certificate", *certificate);
                answer_everything(conversion, redirecting, *condition->answer);
            }
        } else if (name == "rewrite") {
            conversion.refuse(directive,
                              "a server-level rewrite runs before every location; "
                              "move it into the locations");
        } else if (name == "try_files") {
            conversion.refuse(directive, "try_files belongs in a location");
        } else if (!drop_or_refuse(conversion, site, directive)) {
            conversion.refuse(directive, "unknown or unsupported in a server block");
        }
    }
    SiteTable& translated = conversion.out.sites[site_index];
    if (server_return) {
        for (const Directive& directive : server.block) {
            if (directive.name == "location")
                conversion.note(translated.site, directive,
                                "dropped: the server-level return answers before any location");
        }
        answer_everything(conversion, translated, *server_return);
        return;
    }
    translate_locations(conversion, server, scope, translated);
}

void write_listeners(Conversion& conversion) {
    std::vector<std::string> plain, tls;
    bool any_proxy_protocol = false;
    int tls_h2 = 0, tls_h1 = 0, plain_h2 = 0;
    for (const Listener& listener : conversion.listeners) {
        std::string entry = listener.proxy_protocol
                                ? toml_inline_table({{"address", toml_string(listener.address)},
                                                     {"proxy_protocol", "true"}})
                                : toml_string(listener.address);
        any_proxy_protocol = any_proxy_protocol || listener.proxy_protocol;
        (listener.tls ? tls : plain).push_back(entry);
        if (listener.tls)
            (listener.http2 ? tls_h2 : tls_h1)++;
        else if (listener.http2)
            plain_h2++;
    }
    auto array = [](const std::vector<std::string>& items) {
        std::string out = "[";
        for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
        return out + "]";
    };
    // [server] listen is required: with only TLS listeners it is empty.
    conversion.out.server.entries.set("listen", array(plain));
    if (!tls.empty()) {
        conversion.out.tls.entries.set("listen", array(tls));
        conversion.out.tls.entries.set("certificates", array(conversion.certificates));
        if (tls_h2 && tls_h1) {
            for (const Listener& listener : conversion.listeners) {
                if (listener.tls && listener.first)
                    conversion.refuse(*listener.first,
                                      "portico offers HTTP/2 on all TLS "
                                      "listeners or none: this mixes both");
            }
        }
        conversion.out.http2.entries.set("enabled", tls_h2 ? "true" : "false");
    }
    if (plain_h2) conversion.out.http2.entries.set("cleartext", "true");
}

}  // namespace portico::convert
