// upstream blocks: server (max_fails, fail_timeout, max_conns), keepalive,
// keepalive_timeout, ip_hash, least_conn.
#include "convert/conversion.hpp"
#include "convert/nginx_values.hpp"
#include "convert/toml_text.hpp"

namespace portico::convert {

namespace {

// nginx's "host" means port 80; a unix: path is made absolute.
std::string server_address(Conversion& conversion, const std::string& text) {
    if (text.starts_with("unix:")) return "unix:" + conversion.absolute(text.substr(5));
    bool has_port = text.starts_with("[") ? text.find("]:") != std::string::npos
                                          : text.find(':') != std::string::npos;
    return has_port ? text : text + ":80";
}

}  // namespace

void translate_upstream(Conversion& conversion, const Directive& upstream) {
    if (!conversion.arity(upstream, 1, 1)) return;
    const std::string& name = upstream.args[0];
    conversion.out.upstreams.emplace_back(name, Table{});
    Table& table = conversion.out.upstreams.back().second;
    table.comments.push_back(Conversion::origin(upstream) + " { ... }");
    std::vector<std::string> servers;
    // max_fails, fail_timeout, max_conns: per server in nginx, per upstream
    // in portico, so every server must agree (nginx's defaults: 1, 10s, 0).
    std::vector<std::string> shared;
    bool keepalive = false;
    for (const Directive& directive : upstream.block) {
        const std::string& kind = directive.name;
        if (kind == "server") {
            if (directive.args.empty()) {
                conversion.refuse(directive, "a server needs an address");
                continue;
            }
            bool first = servers.empty();
            std::string max_fails = "1", fail_timeout = "\"10s\"", max_conns = "0";
            bool refused = false;
            for (size_t i = 1; i < directive.args.size(); ++i) {
                const std::string& option = directive.args[i];
                std::string value = option.substr(option.find('=') + 1);
                if (option.starts_with("max_fails=")) {
                    max_fails = value;
                } else if (option.starts_with("fail_timeout=")) {
                    std::optional<std::string> duration = portico_duration(value);
                    if (!duration)
                        refused = true;
                    else
                        fail_timeout = toml_string(*duration);
                } else if (option.starts_with("max_conns=")) {
                    max_conns = value;
                } else if (option == "weight=1") {
                } else {
                    conversion.refuse(directive, "the server option " + option +
                                                     " has no equivalent (weights, backup and "
                                                     "down are not portico's)");
                    refused = true;
                }
            }
            if (refused) continue;
            std::vector<std::string> these{max_fails, fail_timeout, max_conns};
            if (!first && these != shared) {
                conversion.refuse(directive,
                                  "max_fails, fail_timeout and max_conns are one per "
                                  "upstream in portico: every server must have the "
                                  "same");
                continue;
            }
            servers.push_back(server_address(conversion, directive.args[0]));
            if (!first) continue;
            shared = these;
            if (max_fails != "1") table.entries.set("max_fails", max_fails);
            if (fail_timeout != "\"10s\"") table.entries.set("fail_timeout", fail_timeout);
            if (max_conns != "0") table.entries.set("max_connections", max_conns);
        } else if (kind == "keepalive") {
            if (conversion.arity(directive, 1, 1)) {
                table.entries.set("keepalive", directive.args[0]);
                keepalive = true;
            }
        } else if (kind == "keepalive_timeout") {
            std::optional<std::string> duration =
                directive.args.size() == 1 ? portico_duration(directive.args[0]) : std::nullopt;
            if (!duration)
                conversion.refuse(directive, "expects one time");
            else
                table.entries.set("idle_timeout", toml_string(*duration));
        } else if (kind == "ip_hash") {
            table.entries.set("balance", toml_string("ip_hash"));
        } else if (kind == "least_conn") {
            table.entries.set("balance", toml_string("least_conn"));
        } else if (kind == "zone" || kind == "keepalive_requests" || kind == "keepalive_time") {
            conversion.note(table, directive,
                            "dropped: portico's counters and pool need no zone "
                            "or per-connection limits");
        } else {
            conversion.refuse(directive,
                              "no equivalent in a portico upstream (hash, random "
                              "and the others are not portico's balancers)");
        }
    }
    // Written first: the table's first key reads best as its servers.
    table.entries.items.insert(table.entries.items.begin(),
                               {"servers", toml_string_array(servers)});
    if (!keepalive) {
        table.comments.push_back(
            "nginx opened a new connection per request here (no "
            "keepalive); portico keeps idle ones (keepalive = 32)");
    }
}

}  // namespace portico::convert
