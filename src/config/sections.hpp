// Internal to the config loader: one reader per part of the file. Each takes
// the node as found (nullptr when absent), reports what is wrong, and fills
// what it can so later parts can still be checked against it.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "config/config.hpp"
#include "config/table_reader.hpp"

namespace portico::config {

struct LoadContext {
    Diagnostics& diagnostics;
    std::filesystem::path folder;  // of the config file; anchors relative paths
    // The [limit.NAME] tables, read before the locations that name them.
    const std::vector<LimitConfig>* limits = nullptr;
    // The [cache.NAME] tables, read before the locations that name them.
    const std::vector<CacheZoneConfig>* caches = nullptr;
};

struct FileText {
    std::string text;
    std::string error;  // strerror's text; empty when the file was read
};
// A whole file (the config, an htpasswd file); a folder is EISDIR.
FileText read_whole_file(const std::string& path);

// `path` made absolute against the config folder, without "." or ".." parts
// or a trailing slash.
std::string resolve_path(const LoadContext& context, std::string_view path);

// RFC 9110 5.6.2: header names, media types and codings are tokens.
bool is_token(std::string_view text);

// Header values go on the wire as written: a CR or LF would split the
// response (header injection).
bool is_header_value(std::string_view text);
// A string that passes is_header_value; `out` is left alone otherwise.
bool read_header_value(TableReader& reader, std::string_view key, std::string& out);

// A template value (config/template.hpp) at `node`, a string. A bad
// variable is reported at its own column ("FIELD: unknown variable ...").
bool read_template(const toml::node& node, std::string_view field, const CaptureScope& scope,
                   Diagnostics& diagnostics, Template& out);

// The groups of an RE2 pattern that compiles, for the templates that use
// its captures.
CaptureScope capture_scope(const std::string& pattern);

// The same IP and port (listen entries that would share one socket).
bool same_socket(const SocketAddress& a, const SocketAddress& b);
// Port 0: any free port, never the same socket as another entry.
bool is_port_zero(const SocketAddress& address);

// The table at `node`, or an error saying what `name` should have been.
const toml::table* expect_table(const toml::node& node, std::string_view name,
                                LoadContext& context);

// `listen` of [server] or [tls]: "IP:port" strings, or tables
// { address = "IP:port", proxy_protocol = true } (config/load_listen.cpp).
bool read_listen(TableReader& reader, std::string_view key, LoadContext& context,
                 std::vector<SocketAddress>& out);

// An array of "IP/BITS" or "IP" (config/address_range.hpp), each bad entry
// reported at its own position; `out` is set only when all are good.
bool read_address_ranges(TableReader& reader, std::string_view key, std::vector<AddressRange>& out);

void read_server(const toml::node* node, LoadContext& context, ServerConfig& server);
void read_log(const toml::node& node, LoadContext& context, LogConfig& log);
void read_metrics(const toml::node& node, LoadContext& context, const ServerConfig& server,
                  std::optional<MetricsConfig>& metrics);
void read_tls(const toml::node& node, LoadContext& context, const ServerConfig& server,
              std::optional<TlsConfig>& tls);
// [tls]'s ocsp_stapling and ocsp_responder (load_ocsp.cpp).
void read_ocsp_stapling(TableReader& reader, TlsConfig& tls);
// { cert = "FILE.pem", key = "FILE.key" } at `node` (tls.certificates
// entries, a site's certificate); `field` names it in messages.
std::optional<CertificateFiles> read_certificate_files(const toml::node& node,
                                                       std::string_view field,
                                                       LoadContext& context);
void read_http2(const toml::node& node, LoadContext& context, Http2Config& http2);
// [acme] (load_acme.cpp); a site's `acme` key once its names and
// certificate are read.
void read_acme(const toml::node& node, LoadContext& context, std::optional<AcmeConfig>& acme);
void read_site_acme(TableReader& reader, const Config& config, SiteConfig& site);
void read_mime(const toml::node& node, LoadContext& context,
               std::vector<std::pair<std::string, std::string>>& mime);

// The named [upstream.NAME] tables, in file order.
// An upstream's tls = { ... } (load_upstream_tls.cpp).
void read_upstream_tls(TableReader& upstream, LoadContext& context, UpstreamConfig& out);
void read_upstreams(const toml::node& node, LoadContext& context,
                    std::vector<UpstreamConfig>& upstreams);

// proxy = "NAME" or "http://host:port": the index into `upstreams`, appending
// an inline upstream for a URL not seen before. A URL's path
// ("http://host:port/v1/") goes to `path`, and is an error without one.
std::optional<size_t> resolve_proxy(const toml::node& value, std::string_view field,
                                    LoadContext& context, std::vector<UpstreamConfig>& upstreams,
                                    std::string* path = nullptr);

// A location's `proxy`: its upstream, and the path that replaces its prefix
// (a prefix location's only, as in nginx).
void read_proxy(TableReader& reader, LoadContext& context, std::vector<UpstreamConfig>& upstreams,
                LocationConfig& location);

// A location's headers, headers_always, proxy_headers and hide_headers.
void read_header_rules(TableReader& reader, Diagnostics& diagnostics, LocationConfig& location);

// A location's compress, precompressed and gzip_static keys.
void read_compression(TableReader& reader, const std::string& label, Diagnostics& diagnostics,
                      LocationConfig& location);

// A location's redirect, rewrite and error_pages keys (load_rules.cpp).
void read_rules(TableReader& reader, const std::string& label, Diagnostics& diagnostics,
                LocationConfig& location);

// The [limit.NAME] tables (load_limits.cpp), in file order.
void read_limit_zones(const toml::node& node, LoadContext& context,
                      std::vector<LimitConfig>& limits);
// A location's limit and max_concurrent keys.
void read_limits(TableReader& reader, const std::string& label, LoadContext& context,
                 LocationConfig& location);

// The [cache.NAME] tables (load_cache.cpp), in file order, and a
// location's `cache` key (after its proxy is read).
void read_cache_zones(const toml::node& node, LoadContext& context,
                      std::vector<CacheZoneConfig>& caches);
void read_location_cache(TableReader& reader, const std::string& label, LoadContext& context,
                         LocationConfig& location);

// A location's allow and deny keys (load_access.cpp).
void read_access(TableReader& reader, const std::string& label, Diagnostics& diagnostics,
                 LocationConfig& location);
// A location's auth key (load_auth.cpp), after its proxy_headers: the
// htpasswd file is read now.
void read_auth(TableReader& reader, const std::string& label, LoadContext& context,
               LocationConfig& location);

// Why `path` cannot serve files (strerror's text), or "" when it can.
std::string unusable_directory(const std::string& path);

// A location's alias, expires and try_files keys (after its match, root,
// cache_control and proxy are read).
void read_static_rules(TableReader& reader, LoadContext& context,
                       const std::vector<UpstreamConfig>& upstreams, LocationConfig& location);

// [[location]] tables (or a site's [[site.location]]): appended to
// `locations`, each with `site` as its site. `site_label`, when not empty,
// starts each location's default name ("example.com/api/").
void read_locations(const toml::node& node, LoadContext& context,
                    std::vector<UpstreamConfig>& upstreams, std::vector<LocationConfig>& locations,
                    size_t site = 0, std::string_view site_label = {});

// The sites: the unnamed one made of the top-level locations (when there
// are some, or no [[site]] at all), then each [[site]] (`node`, or nullptr)
// with its locations. Reads after [server], [tls] and the top-level
// locations.
void read_sites(const toml::node* node, LoadContext& context, Config& config);

}  // namespace portico::config
