// Internal to the converter: the state one conversion carries (the config
// being written, the refusals, nginx's inheritance of directives from
// http to server to location), and the translators of each directive
// family, one file each.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "convert/nginx_parser.hpp"
#include "convert/portico_config.hpp"

namespace portico::convert {

// The directives in force at a level, by name: nginx's inheritance, where
// a level that has any directive of a name replaces all of its parent's.
using Scope = std::map<std::string, std::vector<const Directive*>>;

// The names that inherit from http to server to location (allow and deny
// together, as "allow_deny": nginx's one list of access rules).
bool is_inherited(const std::string& name);

// `parent` with the inherited directives of `block` laid over it.
Scope scope_of(const Scope& parent, const std::vector<Directive>& block);

// "name=value" among a directive's arguments: the value, or "".
std::string named_option(const Directive& directive, const std::string& name);

// The last directive of `name` in force, or null.
const Directive* last_in(const Scope& scope, const std::string& name);

// One listening address, as the servers that name it want it.
struct Listener {
    std::string address;  // "0.0.0.0:80", "[::]:443"
    bool tls = false;
    bool http2 = false;
    bool proxy_protocol = false;
    const Directive* first = nullptr;  // the listen line that opened it
};

class Conversion {
public:
    explicit Conversion(std::string prefix) : prefix_(std::move(prefix)) {}

    PorticoConfig out;
    std::vector<Refusal> refusals;
    std::vector<const Directive*> upstream_blocks;
    std::vector<Listener> listeners;
    std::vector<std::string> certificates;      // [tls] certificates entries, rendered
    std::vector<const Directive*> limit_zones;  // limit_req_zone, limit_conn_zone
    std::vector<const Directive*> cache_paths;  // proxy_cache_path not translated yet

    // FILE:LINE: directive: why (once per directive, however many
    // locations inherit it).
    void refuse(const Directive& directive, std::string why);
    // A comment in `table`: what was dropped, and why that is the same.
    void note(Table& table, const Directive& directive, const std::string& why);
    // A directive with the number of arguments it takes, else refused.
    bool arity(const Directive& directive, size_t min, size_t max);
    // "nginx.conf:12: location /api/"
    static std::string origin(const Directive& directive);
    // Relative paths as nginx reads them: against the prefix.
    std::string absolute(const std::string& path) const;
    // A [server]/[log]/[tls] key that portico has once for everything:
    // a second, different value is refused.
    void set_global(Table& table, const std::string& key, const std::string& value,
                    const Directive* directive);
    bool is_upstream_block(const std::string& name) const;

private:
    std::string prefix_;
    std::map<std::string, const Directive*> global_setters_;
};

// [server] listen, [tls] and [http2] from the listeners the servers named.
void write_listeners(Conversion& conversion);
// Drops (with a note in `table`) or refuses what the converter knows it
// cannot or need not translate; false for anything else.
bool drop_or_refuse(Conversion& conversion, Table& table, const Directive& directive);
void translate_real_ip_directive(Conversion& conversion, const Directive& directive);

// The families of directives (translate_*.cpp).
void translate_upstream(Conversion& conversion, const Directive& upstream);
void translate_server(Conversion& conversion, const Directive& server, const Scope& http_scope);
// The locations of one server into `site` (named ones feed try_files).
void translate_locations(Conversion& conversion, const Directive& server, const Scope& server_scope,
                         SiteTable& site);
// `return CODE [TEXT|URL]` / `return URL` as redirect or respond.
void translate_location_return(Conversion& conversion, const Directive& directive, Table& location);
// Where a proxy_pass is translated: a prefix location (a path may follow),
// another location (none may), or a named location that a try_files
// "@NAME" falls back to (its upstream named, no `proxy` key).
enum class ProxyUse { prefix_location, other_location, try_files_fallback };
// proxy_pass and its options (translate_proxy.cpp): proxy, preserve_host,
// websocket, proxy_headers, hide_headers, timeouts on the upstream.
// Returns the upstream's name when it is a named one.
std::string translate_proxy(Conversion& conversion, const Directive& proxy_pass, const Scope& scope,
                            ProxyUse use, Table& location);
// headers, expires, compression, gzip_static, error_pages (translate_response.cpp).
void translate_response_options(Conversion& conversion, const Scope& scope, bool has_files,
                                bool has_proxy, Table& location);
// limit_req, limit_conn, allow/deny, auth_basic (translate_access.cpp),
// to the keys of the spec's "Limits and access control".
void translate_access(Conversion& conversion, const Scope& scope, Table& location);
// proxy_cache_path as a [cache.NAME] zone (translate_cache.cpp), once:
// where it is, or earlier for a location that names it.
void translate_cache_path(Conversion& conversion, const Directive& path);
// proxy_cache and its proxy_cache_* options, for a location with `proxy`:
// its `cache` table.
void translate_cache(Conversion& conversion, const Scope& scope, Table& location);
// A try_files fallback to a named location that caches: nginx caches only
// what that location proxies, portico's cache belongs to a location with
// `proxy`: refused.
void refuse_cache_in_fallback(Conversion& conversion, const Scope& named_scope);
// add_header NAME $upstream_cache_status: the cache's status_header, not a
// header of `headers`.
bool shows_cache_status(const Directive& add_header);
// The server-wide settings nginx allows at any level, as a location sees
// them (client_max_body_size, keepalive_timeout, access_log...).
void translate_globals(Conversion& conversion, const Scope& scope);

}  // namespace portico::convert
