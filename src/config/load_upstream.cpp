// [upstream.NAME] tables, and the upstream a location's `proxy` names.
#include <algorithm>
#include <cctype>

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
        reader.read_addresses("servers", upstream.servers, host_names, context.folder.string());
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
    read_upstream_tls(reader, context, upstream);
    reader.finish();
}

// A path in a proxy URL as it goes on the wire: RFC 3986 pchars, '/' and
// percent-escapes. Anything else would be sent in the request line as is.
bool is_url_path(std::string_view path) {
    constexpr std::string_view symbols = "-._~!$&'()*+,;=:@/";
    for (size_t i = 0; i < path.size(); ++i) {
        auto c = static_cast<unsigned char>(path[i]);
        if (std::isalnum(c) || symbols.find(static_cast<char>(c)) != std::string_view::npos)
            continue;
        if (c == '%' && i + 2 < path.size() &&
            std::isxdigit(static_cast<unsigned char>(path[i + 1])) &&
            std::isxdigit(static_cast<unsigned char>(path[i + 2]))) {
            i += 2;
            continue;
        }
        return false;
    }
    return true;
}

struct ProxyUrl {
    std::string authority;  // "host:port", a missing port 80 (443 for https) as in any URL
    std::string path;       // "" when the URL has none, else starting with '/'
    bool https = false;
};

// "http://host:port" and "https://host:port/v1/". nullopt (with `why`) for
// what such a target cannot mean here: a query, a fragment, userinfo.
std::optional<ProxyUrl> split_proxy_url(std::string_view url, std::string& why) {
    bool https = url.starts_with("https://");
    std::string_view rest = url.substr(https ? 8 : 7);
    if (rest.find_first_of("?#") != std::string_view::npos) {
        why = "a query or fragment in the URL is not supported: the request's own are sent";
        return std::nullopt;
    }
    size_t slash = rest.find('/');
    std::string_view authority = rest.substr(0, slash);
    if (authority.find('@') != std::string_view::npos) {
        why =
            "user information in the URL is not supported; set an Authorization header with "
            "proxy_headers";
        return std::nullopt;
    }
    if (authority.empty()) {
        why = "expected \"http://host:port\" or \"http://host:port/path/\"";
        return std::nullopt;
    }
    ProxyUrl split;
    if (slash != std::string_view::npos) {
        split.path = std::string(rest.substr(slash));
        if (!is_url_path(split.path)) {
            why = "the path '" + split.path + "' has characters that must be percent-encoded";
            return std::nullopt;
        }
    }
    split.authority = std::string(authority);
    size_t bracket = split.authority.rfind(']');
    size_t colon = split.authority.rfind(':');
    bool has_port = colon != std::string::npos && (bracket == std::string::npos || colon > bracket);
    if (!has_port) {
        split.authority += https ? ":443" : ":80";
    }
    split.https = https;
    return split;
}

// One inline upstream per server, whatever paths the URLs naming it carry:
// named "http://host:port" as written, without the path.
std::optional<size_t> inline_upstream(const ProxyUrl& url, std::string_view name,
                                      const toml::node& value, std::string_view field,
                                      LoadContext& context,
                                      std::vector<UpstreamConfig>& upstreams) {
    auto same_url = [name](const UpstreamConfig& upstream) { return upstream.name == name; };
    if (auto found = std::find_if(upstreams.begin(), upstreams.end(), same_url);
        found != upstreams.end()) {
        return static_cast<size_t>(found - upstreams.begin());
    }
    std::string why;
    std::optional<SocketAddress> server =
        parse_socket_address(url.authority, HostNames::resolve_now, why);
    if (!server) {
        context.diagnostics.error(value.source(),
                                  std::string(field) + ": " + describe(value) + ": " + why);
        return std::nullopt;
    }
    UpstreamConfig upstream;
    upstream.name = std::string(name);
    upstream.servers.push_back(std::move(*server));
    // nginx's proxy_pass https://: TLS with every default (verified).
    if (url.https) {
        upstream.tls.emplace();
        upstream.tls->where = position_of(value.source());
    }
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
                                    LoadContext& context, std::vector<UpstreamConfig>& upstreams,
                                    std::string* path) {
    const auto* text = value.as_string();
    if (!text) {
        context.diagnostics.error(value.source(), std::string(field) +
                                                      ": expected an upstream name or "
                                                      "\"http://host:port\", got " +
                                                      describe(value));
        return std::nullopt;
    }
    const std::string& target = text->get();
    if (target.starts_with("http://") || target.starts_with("https://")) {
        std::string why;
        std::optional<ProxyUrl> url = split_proxy_url(target, why);
        if (url && !url->path.empty() && !path) why = "a path is not accepted here";
        if (!why.empty()) {
            context.diagnostics.error(value.source(),
                                      std::string(field) + ": " + describe(value) + ": " + why);
            return std::nullopt;
        }
        std::string_view name =
            std::string_view(target).substr(0, target.size() - url->path.size());
        std::optional<size_t> upstream =
            inline_upstream(*url, name, value, field, context, upstreams);
        if (upstream && path) *path = std::move(url->path);
        return upstream;
    }
    if (target.find("://") != std::string::npos) {
        context.diagnostics.error(value.source(),
                                  std::string(field) + ": " + describe(value) +
                                      ": only http:// and https:// upstreams are supported");
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

void read_proxy(TableReader& reader, LoadContext& context, std::vector<UpstreamConfig>& upstreams,
                LocationConfig& location) {
    const toml::node* proxy = reader.get("proxy");
    if (!proxy) return;
    std::string path;
    location.upstream = resolve_proxy(*proxy, reader.field("proxy"), context, upstreams, &path);
    if (path.empty()) return;
    if (location.match != MatchKind::prefix) {
        // What would it replace? nginx refuses it too.
        reader.report("proxy", *proxy,
                      "a path in the URL replaces the matched prefix: only a prefix location may "
                      "have one; write \"http://host:port\" without '" +
                          path + "'");
        return;
    }
    // The prefix replaced by itself changes nothing: the target goes as received.
    if (path != location.pattern) location.proxy_path = std::move(path);
}

}  // namespace portico::config
