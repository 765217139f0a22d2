// [upstream.NAME] tables, and the upstream a location's `proxy` names.
#include <algorithm>

#include "config/sections.hpp"
#include "config/units.hpp"

namespace portico::config {

namespace {

constexpr Duration minimum_resolve{100};

void read_upstream(const std::string& name, const toml::table& table, LoadContext& context,
                   UpstreamConfig& upstream) {
    std::string label = "upstream." + name;
    TableReader reader(table, label + ".", "[" + label + "]", context.diagnostics);
    // Before `servers`: it decides when their host names are looked up.
    // Every worker queries the DNS each interval: below 100ms that is a
    // flood, not freshness.
    if (reader.read_duration("resolve", upstream.resolve) && upstream.resolve > Duration::zero() &&
        upstream.resolve < minimum_resolve) {
        reader.wrong("resolve", "\"0s\" (resolve at load only) or at least \"100ms\"");
        upstream.resolve = Duration::zero();
    }
    if (reader.require("servers", "servers = [\"127.0.0.1:3000\"]")) {
        HostNames host_names =
            upstream.resolve > Duration::zero() ? HostNames::resolve_later : HostNames::resolve_now;
        reader.read_addresses("servers", upstream.servers, host_names);
    }
    reader.read_choice("balance", upstream.balance,
                       {{"round_robin", Balance::round_robin},
                        {"least_conn", Balance::least_conn},
                        {"ip_hash", Balance::ip_hash}});
    // 0 = no pooling: every request opens a fresh connection.
    bool keepalive_set = reader.read_bounded("keepalive", upstream.keepalive, 0u, UINT32_MAX);
    // 0 = no limit; otherwise requests beyond it wait (at most connect_timeout).
    reader.read_bounded("max_connections", upstream.max_connections, 0u, UINT32_MAX);
    // Every connection the limit lets open may stay pooled: a smaller
    // default would close, above it, connections the next burst reopens.
    // (More than max_connections could never be idle at once.)
    if (!keepalive_set && upstream.max_connections > 0) {
        upstream.keepalive = upstream.max_connections;
    }
    reader.read_duration("idle_timeout", upstream.idle_timeout);
    constexpr Duration positive{1};
    reader.read_duration("connect_timeout", upstream.connect_timeout, positive);
    reader.read_duration("read_timeout", upstream.read_timeout, positive);
    reader.read_duration("send_timeout", upstream.send_timeout, positive);
    // 0 = never mark a server down (passive health checks off).
    reader.read_bounded("max_fails", upstream.max_fails, 0u, UINT32_MAX);
    reader.read_duration("fail_timeout", upstream.fail_timeout);
    reader.finish();
}

// "http://host:port" or "http://host:port/" -> "host:port"; a missing port
// is 80, as in any http URL. nullopt (with `why`) for anything else.
std::optional<std::string> proxy_authority(std::string_view url, std::string& why) {
    constexpr std::string_view scheme = "http://";
    std::string_view rest = url.substr(scheme.size());
    if (rest.ends_with('/')) {
        rest.remove_suffix(1);
    }
    if (rest.empty() || rest.find_first_of("/?#@") != std::string_view::npos) {
        why = "expected \"http://host:port\" without a path";
        return std::nullopt;
    }
    std::string authority(rest);
    size_t bracket = authority.rfind(']');
    size_t colon = authority.rfind(':');
    bool has_port = colon != std::string::npos && (bracket == std::string::npos || colon > bracket);
    if (!has_port) {
        authority += ":80";
    }
    return authority;
}

std::optional<size_t> inline_upstream(std::string_view url, const toml::node& value,
                                      std::string_view field, LoadContext& context,
                                      std::vector<UpstreamConfig>& upstreams) {
    auto same_url = [url](const UpstreamConfig& upstream) { return upstream.name == url; };
    if (auto found = std::find_if(upstreams.begin(), upstreams.end(), same_url);
        found != upstreams.end()) {
        return static_cast<size_t>(found - upstreams.begin());
    }
    std::string why;
    std::optional<std::string> authority = proxy_authority(url, why);
    std::optional<SocketAddress> server;
    if (authority) {
        server = parse_socket_address(*authority, HostNames::resolve_now, why);
    }
    if (!server) {
        context.diagnostics.error(value.source(),
                                  std::string(field) + ": " + describe(value) + ": " + why);
        return std::nullopt;
    }
    UpstreamConfig upstream;
    upstream.name = std::string(url);
    upstream.servers.push_back(std::move(*server));
    upstreams.push_back(std::move(upstream));
    return upstreams.size() - 1;
}

}  // namespace

void read_upstreams(const toml::node& node, LoadContext& context,
                    std::vector<UpstreamConfig>& upstreams) {
    const toml::table* table = expect_table(node, "upstream", context);
    if (!table) {
        return;
    }
    for (const auto& [key, value] : entries_in_file_order(*table)) {
        std::string name(key->str());
        const toml::table* upstream_table = value->as_table();
        if (!upstream_table) {
            context.diagnostics.error(key->source(),
                                      "upstream." + name + ": expected a table [upstream." + name +
                                          "] with servers = [...], got " + describe(*value));
            continue;
        }
        // Kept even when invalid, so that locations naming it are not also
        // reported as naming an unknown upstream.
        UpstreamConfig& upstream = upstreams.emplace_back();
        upstream.name = name;
        read_upstream(name, *upstream_table, context, upstream);
    }
}

std::optional<size_t> resolve_proxy(const toml::node& value, std::string_view field,
                                    LoadContext& context, std::vector<UpstreamConfig>& upstreams) {
    const auto* text = value.as_string();
    if (!text) {
        context.diagnostics.error(value.source(), std::string(field) +
                                                      ": expected an upstream name or "
                                                      "\"http://host:port\", got " +
                                                      describe(value));
        return std::nullopt;
    }
    const std::string& target = text->get();
    if (target.starts_with("http://")) {
        return inline_upstream(target, value, field, context, upstreams);
    }
    if (target.find("://") != std::string::npos) {
        context.diagnostics.error(value.source(), std::string(field) + ": " + describe(value) +
                                                      ": only http:// upstreams are supported");
        return std::nullopt;
    }
    auto same_name = [&target](const UpstreamConfig& upstream) { return upstream.name == target; };
    auto found = std::find_if(upstreams.begin(), upstreams.end(), same_name);
    if (found == upstreams.end()) {
        context.diagnostics.error(value.source(), std::string(field) + " names unknown upstream '" +
                                                      target + "'; define [upstream." + target +
                                                      "] or use \"http://host:port\"");
        return std::nullopt;
    }
    return static_cast<size_t>(found - upstreams.begin());
}

}  // namespace portico::config
