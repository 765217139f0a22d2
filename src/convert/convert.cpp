#include "convert/convert.hpp"

#include <set>

#include "convert/conversion.hpp"
#include "convert/nginx_values.hpp"
#include "convert/toml_text.hpp"

namespace portico::convert {

namespace {

// Directives whose work portico does by itself, or that only tune nginx's
// own machinery: dropped, with the reason as a comment.
const char* dropped_reason(const std::string& name) {
    static const std::map<std::string, const char*> reasons{
        {"events", "portico's workers each run their own event loop"},
        {"pid", "portico runs in the foreground (systemd style) and writes no pid file"},
        {"worker_connections", "portico's max_connections default (4096 per worker) applies"},
        {"worker_rlimit_nofile", "set the file limit in the service unit (LimitNOFILE)"},
        {"worker_cpu_affinity", "portico leaves CPU placement to the kernel"},
        {"worker_shutdown_timeout", "portico's shutdown_timeout (30s) applies"},
        {"multi_accept", "portico's workers accept with SO_REUSEPORT"},
        {"accept_mutex", "portico's workers accept with SO_REUSEPORT"},
        {"use", "portico uses epoll through libuv"},
        {"daemon", "portico runs in the foreground"},
        {"load_module",
         "portico's modules are built in (gzip, brotli, zstd...); the "
         "directives of one it lacks are refused where they are used"},
        {"master_process", "portico always has a master"},
        {"include", "already read"},
        {"sendfile", "portico always sends files with sendfile(2)"},
        {"tcp_nodelay", "portico always sets TCP_NODELAY"},
        {"tcp_nopush", "a tuning of the kernel's segments: portico leaves it off"},
        {"types_hash_max_size", "a tuning of nginx's tables"},
        {"types_hash_bucket_size", "a tuning of nginx's tables"},
        {"server_names_hash_bucket_size", "a tuning of nginx's tables"},
        {"server_names_hash_max_size", "a tuning of nginx's tables"},
        {"variables_hash_max_size", "a tuning of nginx's tables"},
        {"client_body_temp_path", "portico streams bodies and keeps no temp files"},
        {"proxy_temp_path", "portico streams bodies and keeps no temp files"},
        {"fastcgi_temp_path", "portico streams bodies and keeps no temp files"},
        {"uwsgi_temp_path", "portico streams bodies and keeps no temp files"},
        {"scgi_temp_path", "portico streams bodies and keeps no temp files"},
        {"client_body_buffer_size", "portico streams request bodies"},
        {"client_header_buffer_size", "portico's max_header_bytes (16KiB) bounds the head"},
        {"large_client_header_buffers", "portico's max_header_bytes (16KiB) bounds the head"},
        {"proxy_buffering", "portico streams responses with back-pressure"},
        {"proxy_buffers", "portico streams responses with back-pressure"},
        {"proxy_buffer_size", "portico streams responses with back-pressure"},
        {"proxy_busy_buffers_size", "portico streams responses with back-pressure"},
        {"proxy_max_temp_file_size", "portico streams responses with back-pressure"},
        {"proxy_request_buffering", "portico streams request bodies"},
        {"ssl_session_cache", "portico resumes sessions with tickets shared by every worker"},
        {"ssl_session_timeout", "portico resumes sessions with tickets shared by every worker"},
        {"ssl_prefer_server_ciphers", "portico prefers the server's order of suites"},
        {"ssl_ecdh_curve", "OpenSSL's default groups apply"},
        {"ssl_dhparam", "portico offers ECDHE key exchange only"},
        {"ssl_stapling", "portico does not staple OCSP for [tls] certificates"},
        {"ssl_stapling_verify", "portico does not staple OCSP for [tls] certificates"},
        {"ssl_trusted_certificate", "portico does not staple OCSP for [tls] certificates"},
        {"ssl_buffer_size", "a tuning of nginx's TLS records"},
        {"server_tokens", "portico's Server header is server_header (\"portico\")"},
        {"resolver", "portico resolves upstream names at load (or with resolve)"},
        {"resolver_timeout", "portico resolves upstream names at load (or with resolve)"},
        {"charset", "portico already adds charset=utf-8 to text types"},
        {"open_file_cache", "portico caches open files and watches them with inotify"},
        {"open_file_cache_valid", "portico caches open files and watches them with inotify"},
        {"open_file_cache_min_uses", "portico caches open files and watches them with inotify"},
        {"open_file_cache_errors", "portico caches open files and watches them with inotify"},
        {"reset_timedout_connection", "portico closes timed-out connections at once"},
        {"send_timeout", "portico's send_timeout (60s) is nginx's default"},
        {"client_header_timeout", "portico's header_timeout applies"},
        {"client_body_timeout", "portico's body_timeout (60s) is nginx's default"},
        {"keepalive_requests", "portico's keepalive_requests applies"},
        {"proxy_redirect", "portico does not rewrite the upstream's Location"},
        {"log_not_found", "portico does not log missing files as errors"},
        {"real_ip_recursive", "portico always walks X-Forwarded-For past trusted proxies"},
        {"gzip_vary", "portico always sends Vary: Accept-Encoding with compression"},
        {"gzip_buffers", "a tuning of nginx's buffers"},
        {"gzip_proxied", "applies to requests from proxies (Via); portico compresses them too"},
        {"gzip_disable", "no browser in use needs it"},
        {"gzip_http_version", "portico compresses HTTP/1.0 responses too"},
        {"ssl_session_tickets", "portico's session_tickets (true) applies"},
        {"limit_req_log_level", "portico logs a refused request once per key per second"},
        {"limit_conn_log_level", "portico logs a refused request once per key per second"},
    };
    auto found = reasons.find(name);
    return found == reasons.end() ? nullptr : found->second;
}

// Directives refused whatever their arguments, with why.
const char* refused_reason(const std::string& name) {
    static const std::map<std::string, const char*> reasons{
        {"map", "portico has no map: write the cases as locations or sites"},
        {"geo", "portico has no geo: use allow/deny"},
        {"sub_filter", "portico does not edit response bodies"},
        {"sub_filter_once", "portico does not edit response bodies"},
        {"sub_filter_types", "portico does not edit response bodies"},
        {"set", "portico has no user variables"},
        {"fastcgi_pass", "portico speaks HTTP to upstreams, not FastCGI"},
        {"uwsgi_pass", "portico speaks HTTP to upstreams, not uwsgi"},
        {"grpc_pass", "portico does not proxy gRPC"},
        {"stream", "portico proxies HTTP only"},
        {"mail", "portico proxies HTTP only"},
        {"autoindex", "portico does not list directories"},
        {"ssi", "portico does not run server-side includes"},
        {"perl", "portico does not embed Perl"},
        {"njs", "portico does not embed njs"},
        {"js_content", "portico does not embed njs"},
        {"limit_rate", "portico does not throttle responses"},
        {"limit_req_dry_run", "portico's limits always apply"},
        {"limit_conn_dry_run", "portico's limits always apply"},
        {"secure_link", "portico has no secure links"},
        {"auth_request", "portico has no subrequest authentication"},
        {"mirror", "portico does not mirror requests"},
        {"internal", "portico has no internal-only locations"},
        {"env", "portico reads no environment"},
    };
    auto found = reasons.find(name);
    return found == reasons.end() ? nullptr : found->second;
}

}  // namespace

bool drop_or_refuse(Conversion& conversion, Table& table, const Directive& directive) {
    if (directive.name == "autoindex" && directive.args == std::vector<std::string>{"off"}) {
        conversion.note(table, directive, "dropped: portico never lists directories");
        return true;
    }
    if (directive.name == "default_type") {
        if (directive.args != std::vector<std::string>{"application/octet-stream"})
            conversion.refuse(directive,
                              "portico sends application/octet-stream for unknown "
                              "types");
        return true;
    }
    if (const char* why = dropped_reason(directive.name)) {
        conversion.note(table, directive, std::string("dropped: ") + why);
        return true;
    }
    if (directive.name.starts_with("lua_") || directive.name.ends_with("_by_lua") ||
        directive.name.ends_with("_by_lua_block") || directive.name.ends_with("_by_lua_file")) {
        conversion.refuse(directive, "portico does not embed Lua");
        return true;
    }
    if (const char* why = refused_reason(directive.name)) {
        conversion.refuse(directive, why);
        return true;
    }
    return false;
}

namespace {

void translate_worker_processes(Conversion& conversion, const Directive& directive) {
    if (!conversion.arity(directive, 1, 1)) return;
    const std::string& value = directive.args[0];
    if (value == "auto") {
        conversion.out.server.entries.set("workers", toml_string("auto"));
    } else if (std::optional<unsigned long long> count = nginx_size(value);
               count && *count >= 1 && *count <= 256 &&
               value.find_first_not_of("0123456789") == std::string::npos) {
        conversion.out.server.entries.set("workers", value);
    } else {
        conversion.refuse(directive, "portico takes \"auto\" or 1..256 workers");
    }
}

void translate_error_log(Conversion& conversion, const Directive& directive) {
    if (!conversion.arity(directive, 1, 2)) return;
    const std::string& file = directive.args[0];
    if (file.starts_with("syslog:") || file.starts_with("memory:")) {
        return conversion.refuse(directive, "portico logs to stderr or a file");
    }
    std::string target = file == "stderr" ? "stderr" : conversion.absolute(file);
    conversion.set_global(conversion.out.log, "error", toml_string(target), &directive);
    if (directive.args.size() == 2) {
        static const std::map<std::string, std::string> levels{
            {"debug", "debug"}, {"info", "info"},  {"notice", "info"}, {"warn", "warn"},
            {"error", "error"}, {"crit", "error"}, {"alert", "error"}, {"emerg", "error"}};
        auto level = levels.find(directive.args[1]);
        if (level == levels.end()) return conversion.refuse(directive, "unknown log level");
        conversion.set_global(conversion.out.log, "level", toml_string(level->second), &directive);
    }
}

void translate_types(Conversion& conversion, const Directive& types) {
    std::set<std::string> seen;
    for (const Directive& entry : types.block) {
        for (const std::string& extension : entry.args) {
            if (!seen.insert(extension).second) continue;  // nginx keeps the first too
            conversion.out.mime.emplace_back(extension, entry.name);
        }
    }
}

void translate_real_ip(Conversion& conversion, const Directive& directive) {
    if (directive.name == "set_real_ip_from") {
        if (!conversion.arity(directive, 1, 1)) return;
        if (directive.args[0].starts_with("unix:"))
            return conversion.refuse(directive, "portico trusts addresses, not unix:");
        Entries& server = conversion.out.server.entries;
        std::string list = server.get("trusted_proxies") ? *server.get("trusted_proxies") : "[]";
        list.pop_back();
        list += (list.size() > 1 ? ", " : "") + toml_string(directive.args[0]) + "]";
        server.set("trusted_proxies", list);
        return;
    }
    // real_ip_header
    if (!conversion.arity(directive, 1, 1)) return;
    const std::string& header = directive.args[0];
    if (header == "X-Forwarded-For" || header == "x-forwarded-for") return;
    if (header == "proxy_protocol") return;  // the listener's proxy_protocol says it
    conversion.refuse(directive,
                      "portico takes the client from X-Forwarded-For or the PROXY "
                      "protocol only");
}

void translate_http(Conversion& conversion, const Directive& http) {
    Scope scope = scope_of({}, http.block);
    for (const Directive& directive : http.block) {
        if (directive.name == "upstream") {
            if (directive.args.size() == 1) conversion.upstream_blocks.push_back(&directive);
        } else if (directive.name == "proxy_cache_path") {
            conversion.cache_paths.push_back(&directive);
        }
    }
    for (const Directive& directive : http.block) {
        const std::string& name = directive.name;
        if (name == "upstream") {
            translate_upstream(conversion, directive);
        } else if (name == "server") {
            translate_server(conversion, directive, scope);
        } else if (name == "types") {
            translate_types(conversion, directive);
        } else if (name == "limit_req_zone" || name == "limit_conn_zone") {
            conversion.limit_zones.push_back(&directive);
        } else if (name == "proxy_cache_path") {
            translate_cache_path(conversion, directive);
        } else if (name == "log_format") {
            // Used by an access_log, which is refused there if it is not
            // portico's combined or json.
        } else if (name == "set_real_ip_from" || name == "real_ip_header") {
            translate_real_ip(conversion, directive);
        } else if (name == "error_log") {
            translate_error_log(conversion, directive);
        } else if (is_inherited(name)) {
            // In force in the servers below: translated where it applies
            // (or dropped or refused here, once).
            drop_or_refuse(conversion, conversion.out.server, directive);
        } else if (!drop_or_refuse(conversion, conversion.out.server, directive)) {
            conversion.refuse(directive, "unknown or unsupported in the http block");
        }
    }
}

}  // namespace

// Shared with translate_server: the same handling there.
void translate_real_ip_directive(Conversion& conversion, const Directive& directive) {
    translate_real_ip(conversion, directive);
}

Converted convert_nginx(const ParsedConfig& parsed, const std::string& prefix) {
    Converted result;
    if (!parsed.error.empty()) {
        result.error = parsed.error;
        return result;
    }
    Conversion conversion(prefix);
    conversion.refusals = parsed.refusals;
    const Directive* http = nullptr;
    for (const Directive& directive : parsed.top) {
        const std::string& name = directive.name;
        if (name == "http") {
            if (http)
                conversion.refuse(directive, "a second http block");
            else
                http = &directive;
        } else if (name == "worker_processes") {
            translate_worker_processes(conversion, directive);
        } else if (name == "error_log") {
            translate_error_log(conversion, directive);
        } else if (name == "user") {
            if (conversion.arity(directive, 1, 2))
                conversion.out.server.entries.set("user", toml_string(directive.args[0]));
        } else if (!drop_or_refuse(conversion, conversion.out.server, directive)) {
            conversion.refuse(directive, "unknown or unsupported at the top level");
        }
    }
    if (!http) {
        result.error = "no http block: nothing to translate";
        result.refusals = std::move(conversion.refusals);
        return result;
    }
    translate_http(conversion, *http);
    write_listeners(conversion);
    if (conversion.out.sites.empty()) {
        result.error = "no server block could be translated";
        result.refusals = std::move(conversion.refusals);
        return result;
    }
    conversion.out.header_comments.push_back(
        "Written by portico convert from " + parsed.top.front().source.file +
        " (docs/convert.md). Each table names the nginx lines it comes from.");
    result.toml = render(conversion.out);
    result.refusals = std::move(conversion.refusals);
    return result;
}

}  // namespace portico::convert
