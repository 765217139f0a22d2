// The validated, immutable configuration snapshot. A worker process gets one
// snapshot for its whole life (a reload starts new workers), so the request
// path can hold string_views into it without reference counting.
#pragma once

#include <sys/socket.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/coding.hpp"
#include "config/template.hpp"

namespace portico::config {

using Duration = std::chrono::milliseconds;

// Where a value came from in the TOML file, for messages.
struct SourcePosition {
    uint32_t line = 0;
    uint32_t column = 0;
};

// "127.0.0.1:8080", "[::1]:8080", "localhost:3000" (upstream servers only).
struct SocketAddress {
    sockaddr_storage storage{};
    socklen_t length = 0;  // 0: a host name the workers look up (an upstream with `resolve`)
    std::string text;      // as written in the file, for logs and metric labels
    // A host name as written ("app"), with its port: what the workers look
    // up again every `resolve`. Empty for IP literals.
    std::string host;
    uint16_t port = 0;
    // A listener that reads the PROXY protocol header (v1 or v2) before
    // anything else on each connection; listeners only.
    bool proxy_protocol = false;

    bool resolved_by_workers() const { return length == 0 && !host.empty(); }
};

// user = "NAME": resolved when the file is read, so `portico -t` already
// knows whether the user exists.
struct RunAsUser {
    std::string name;
    uid_t uid = 0;
    gid_t gid = 0;  // the user's own (primary) group
};

// The workers' CPU scheduling policy (sched(7)), when the config sets one;
// unset, workers keep the policy portico was started with (chrt, systemd's
// CPUSchedulingPolicy=), as nginx's do. normal: SCHED_OTHER. batch: SCHED_BATCH, a worker woken by
// a socket does not preempt the task running on its CPU, so it wakes less often, with more ready
// per wakeup: less CPU per request beside an app that mostly waits, far fewer requests beside one
// that computes (docs/configuration.md, "Worker scheduling").
enum class WorkerScheduling { normal, batch };

// An address range, "10.0.0.0/8", "::1", "fd00::/8" (trusted_proxies, and
// the allow/deny lists of access control).
struct AddressRange {
    int family = 0;  // AF_INET or AF_INET6
    uint8_t bytes[16]{};
    uint8_t prefix_length = 0;  // bits
    std::string text;           // as written
};

struct ServerConfig {
    std::vector<SocketAddress> listen;
    unsigned workers = 1;  // "auto" is resolved to the CPU count at load time
    uint32_t max_connections = 4096;
    Duration keepalive_timeout{std::chrono::seconds(75)};
    uint32_t keepalive_requests = 10000;
    Duration header_timeout{std::chrono::seconds(10)};
    Duration body_timeout{std::chrono::seconds(60)};
    Duration send_timeout{std::chrono::seconds(60)};
    uint64_t max_header_bytes = 16 * 1024;
    uint64_t max_body_bytes = 16 * 1024 * 1024;
    // SO_SNDBUF for a client connection with more to send than the kernel's
    // send buffer autotuning can hold (a large file); 0: never set. Off by
    // default: on loopback most of what it saved the server moved into the
    // client's context (docs/benchmarks.md, "Large files").
    uint64_t large_send_buffer = 0;
    Duration shutdown_timeout{std::chrono::seconds(30)};
    std::string server_header = "portico";
    std::optional<RunAsUser> user;  // workers switch to it (when started as root)
    std::optional<WorkerScheduling> worker_scheduling;  // unset: as started
    // Peers whose X-Forwarded-For names the real client ($remote_addr, the
    // access log, ip_hash, limits); empty: the peer is the client.
    std::vector<AddressRange> trusted_proxies;
};

enum class LogLevel { trace, debug, info, warn, error };
enum class AccessFormat { combined, json };

struct LogConfig {
    LogLevel level = LogLevel::info;
    std::string error = "stderr";  // "stderr" or an absolute path
    std::string access = "off";    // "off", "stdout" or an absolute path
    AccessFormat access_format = AccessFormat::combined;
};

// One certificate chain and its key, as PEM files (absolute paths).
struct CertificateFiles {
    std::string cert;  // the leaf first, then its intermediates
    std::string key;
    SourcePosition where;  // of the { cert, key } entry, for messages
};

// Mozilla's "intermediate" TLS 1.2 suites (TLS 1.3's are OpenSSL's defaults).
inline constexpr std::string_view intermediate_ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:"
    "DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384:DHE-RSA-CHACHA20-POLY1305";

struct TlsConfig {
    std::vector<SocketAddress> listen;  // beside [server] listen, which stays cleartext
    std::vector<CertificateFiles> certificates;  // the first is the default
    bool tls12 = true;
    bool tls13 = true;
    std::string ciphers{intermediate_ciphers};
    SourcePosition ciphers_where;
    bool session_tickets = true;
    Duration handshake_timeout{std::chrono::seconds(10)};
    // Requests on the cleartext listeners are sent to https (301 or 308),
    // except the ACME challenges.
    bool redirect_http = false;
    // OCSP stapling (docs/configuration.md, "OCSP stapling"): on for every
    // certificate whose issuer names a responder; `ocsp_responder` (http://
    // or https://) replaces the certificates' own.
    bool ocsp_stapling = true;
    std::string ocsp_responder;
};

// [http2]: HTTP/2 beside HTTP/1.1 on the same listeners.
struct Http2Config {
    bool enabled = true;     // h2 offered by ALPN on the TLS listeners
    bool cleartext = false;  // h2c with prior knowledge on the cleartext listeners
    uint32_t max_concurrent_streams = 128;
};

struct MetricsConfig {
    SocketAddress listen;
};

// [acme]: certificates obtained and renewed from an ACME CA (RFC 8555) for
// the sites with `acme = true`.
struct AcmeConfig {
    std::string email;      // the account's contact; empty: none
    std::string directory;  // the CA's directory URL (https://)
    std::string storage;    // absolute; the account key, certificates and keys (0600)
    std::string ca_root;    // absolute PEM file trusted for the CA's API; empty: the system's
};

enum class Balance { round_robin, least_conn, ip_hash };

// tls = { verify, ca, server_name, cert, key } on an upstream: its servers
// speak HTTPS (docs/configuration.md, "Upstream TLS"). Paths are absolute.
struct UpstreamTlsConfig {
    bool verify = true;
    std::string ca;                          // trusted roots (PEM); "": the system's store
    std::string server_name;                 // SNI and the name verified; "": each server's host
    std::optional<CertificateFiles> client;  // a client certificate (mTLS)
    SourcePosition where;                    // of the tls = { } value, for messages
};

struct UpstreamConfig {
    std::string name;  // the table name, or the URL of an inline upstream
    std::optional<UpstreamTlsConfig> tls;
    std::vector<SocketAddress> servers;
    // How often each worker looks the host names in `servers` up again,
    // every address then a server; 0: once, by the master, at load.
    Duration resolve{0};
    Balance balance = Balance::round_robin;
    uint32_t keepalive = 32;  // unless set: max_connections when that is set
    // Connections open or opening per worker per server; 0 = no limit. Past
    // it, requests wait in a queue (HAProxy's server maxconn).
    uint32_t max_connections = 0;
    Duration idle_timeout{std::chrono::seconds(4)};
    Duration connect_timeout{std::chrono::seconds(5)};
    Duration read_timeout{std::chrono::seconds(60)};
    Duration send_timeout{std::chrono::seconds(60)};
    uint32_t max_fails = 1;
    Duration fail_timeout{std::chrono::seconds(10)};
};

enum class MatchKind { exact, prefix, regex };

struct RespondConfig {
    int status = 200;
    std::string body;
};

// compress = true, or a table: what a location compresses on the fly, and
// how hard (see docs/configuration.md, "Compression").
struct CompressConfig {
    // Media types, lowercased: "type/subtype", or "type/*" for all of a type.
    std::vector<std::string> types{"text/*", "application/javascript", "application/json",
                                   "image/svg+xml"};
    // A response whose length is known and below this goes out as it is:
    // the coding's own framing would eat most of what it saves.
    uint64_t min_length = 256;
    int gzip_level = 5;    // zlib, 1..9
    int brotli_level = 4;  // 0..11
    int zstd_level = 3;    // 1..19

    int level(Coding coding) const {
        return coding == Coding::br ? brotli_level : coding == Coding::zstd ? zstd_level : gzip_level;
    }
};

// redirect = { to, status }: nginx `return 301 URL`.
struct RedirectConfig {
    Template to;
    int status = 302;  // 301, 302, 303, 307 or 308
};

enum class RewriteFlag { last, break_, redirect, permanent };

// rewrite = [{ from, to, flag }]: nginx `rewrite REGEX REPLACEMENT FLAG`.
struct RewriteRule {
    std::string from;  // RE2, matched against the normalized path ($uri)
    Template to;       // its captures are from's groups
    RewriteFlag flag = RewriteFlag::last;
    SourcePosition where;
};

// try_files: every entry but the last a file (or "$uri/": a directory) under
// the location's root or alias; the last one a URI, "=CODE" or "@UPSTREAM".
struct TryFilesConfig {
    std::vector<Template> files;
    enum class Fallback { uri, status, upstream } fallback = Fallback::uri;
    Template uri;                    // Fallback::uri
    int status = 404;                // Fallback::status
    std::optional<size_t> upstream;  // Fallback::upstream: index into Config::upstreams
};

struct HeaderRule {
    std::string name;
    Template value;  // a value that expands to "" removes the header (proxy_headers) or
                     // is not sent (headers)
};

// [limit.NAME]: nginx's limit_req zone (a leaky bucket per key), shared by
// every worker (access/rate_limits.hpp).
struct LimitConfig {
    std::string name;
    Template key;               // a key that expands to "" is not counted
    uint64_t rate_milli = 0;    // requests per second x 1000 ("10r/s": 10000, "30r/m": 500)
    uint32_t burst = 0;         // requests beyond the rate that wait (or pass, see delay)
    uint32_t delay = 0;         // of the burst, how many pass at once (nginx delay=N)
    int status = 429;           // the answer beyond the burst
    uint64_t zone_bytes = 10u << 20;  // keys kept; the least recently seen are evicted
    SourcePosition where;       // of the [limit.NAME] table
};

// max_concurrent = { key, count, status }: nginx's limit_conn, per request
// (HTTP/2 streams count one each), across every worker.
struct ConcurrencyLimitConfig {
    Template key;  // a key that expands to "" is not counted
    uint32_t count = 0;
    int status = 429;
};

// One allow or deny entry: "all" is the range of length 0 of both families.
struct AccessRule {
    AddressRange range;
    bool all = false;  // "all"
    bool allow = false;
};

// One line of an htpasswd file: "user:hash".
struct HtpasswdEntry {
    std::string user;
    std::string hash;  // "$2y$..", "$2b$..", "$5$..", "$6$..", "$apr1$.."
};

// auth = { realm, htpasswd, forward }: HTTP Basic authentication
// (nginx auth_basic, auth_basic_user_file).
struct AuthConfig {
    std::string realm;
    std::string htpasswd;  // the file, absolute; read when the config is (and on reload)
    std::vector<HtpasswdEntry> users;  // the file's good lines, in file order
    // The client's Authorization header goes to the upstream; off, it is
    // removed (the password stays with portico).
    bool forward = false;
};

// [cache.NAME]: a response cache zone, one region of shared memory every
// worker stores into and answers from (cache/cache_zones.hpp).
struct CacheZoneConfig {
    std::string name;
    uint64_t memory = 0;  // the shared-memory tier: bodies, heads and index
    // The disk tier (cache/disk_tier.hpp): a folder that can be created and
    // written; max_size 0: bounded by its index only.
    std::string path;
    uint64_t max_size = 0;
    SourcePosition where;  // of the [cache.NAME] table
};

// cache = { zone, valid, key, ... }: nginx's proxy_cache and its
// proxy_cache_* directives (docs/configuration.md, "Response cache").
struct LocationCacheConfig {
    size_t zone = 0;  // index into Config::caches
    // status -> freshness where the upstream says nothing; status 0: "any".
    std::vector<std::pair<int, std::chrono::seconds>> valid;
    Template key;  // "$scheme$host$request_uri" unless set
    bool lock = false;
    Duration lock_timeout{std::chrono::seconds(5)};
    std::chrono::seconds stale_while_revalidate{0};
    std::chrono::seconds stale_if_error{0};
    std::string status_header;  // "": the result is not shown to clients
};

struct LocationConfig {
    std::string name;  // label in metrics and logs; defaults to the match text
    MatchKind match = MatchKind::prefix;
    std::string pattern;  // the exact path, the prefix, or the RE2 regex
    bool stop_regex = false;
    SourcePosition where;  // of the [[location]] table

    // root = "DIR": static files (absolute path, resolved against the config folder)
    std::optional<std::string> root;
    std::vector<std::string> index{"index.html"};
    // Sidecars FILE.br, FILE.zst, FILE.gz sent to clients that accept them
    // (precompressed = [...]; gzip_static = true is gzip alone).
    CodingSet precompressed;
    std::optional<std::string> cache_control;
    bool dotfiles = false;
    // A file response's head and first bytes leave in one packet, and the
    // file in full packets (TCP_CORK while it is sent; nginx's tcp_nopush).
    // Off by default, as nginx's: on loopback it cost the server twice the
    // CPU per 100 KiB and 10 MiB file, and saved on 1 MiB ones (docs/benchmarks.md).
    bool tcp_nopush = false;

    // proxy = "NAME" or "http://host:port": index into Config::upstreams
    std::optional<size_t> upstream;
    bool preserve_host = true;
    bool websocket = true;

    // proxy = "http://host:port/v1/": the path that replaces the matched
    // prefix (nginx proxy_pass with a URI); empty: the target as received.
    std::string proxy_path;
    std::vector<HeaderRule> proxy_headers;  // set on the request to the upstream
    std::vector<std::string> hide_headers;  // removed from its response, lowercase

    // alias = "DIR": the matched prefix replaced by this folder (absolute).
    std::optional<std::string> alias;
    std::optional<TryFilesConfig> try_files;
    std::optional<std::chrono::seconds> expires;  // Cache-Control max-age and Expires

    std::optional<RedirectConfig> redirect;
    std::vector<RewriteRule> rewrite;
    // status -> a URI answered through the site's locations, original status kept
    std::vector<std::pair<int, Template>> error_pages;

    std::optional<RespondConfig> respond;  // status 444: close without a response
    // Added to this location's responses: 200, 201, 204, 206, 301, 302, 303,
    // 304, 307 and 308 (nginx add_header); any status with headers_always.
    std::vector<HeaderRule> headers;
    bool headers_always = false;

    // Limits and access control, in nginx's order: limits (preaccess), then
    // allow/deny, then auth (access).
    std::vector<size_t> limits;  // indices into Config::limits
    std::optional<ConcurrencyLimitConfig> max_concurrent;
    // allow and deny together, each address judged by the most specific
    // entry that contains it (the longest prefix); none: it passes.
    std::vector<AccessRule> access;
    std::optional<AuthConfig> auth;

    size_t site = 0;  // index into Config::sites

    // Responses of this location are compressed on the fly (static and
    // proxied alike); nullopt: never.
    std::optional<CompressConfig> compress;

    // Proxied responses stored in and answered from a cache zone.
    std::optional<LocationCacheConfig> cache;
};

// A site name: "example.com", "*.example.com" or a regex "~^(?<sub>.+)\\.example\\.com$".
struct SiteName {
    enum class Kind { exact, wildcard, regex } kind = Kind::exact;
    std::string text;  // lowercase; a wildcard's without the '*' (".example.com"); a regex's RE2
};

// [[site]] (nginx's server block). A config without [[site]] is one
// unnamed site answering every host.
struct SiteConfig {
    std::vector<SiteName> names;        // empty: the unnamed site (top-level locations)
    std::vector<SocketAddress> listen;  // empty: every [server] and [tls] listener
    bool is_default = false;
    std::optional<CertificateFiles> certificate;
    bool acme = false;              // its certificate comes from [acme]
    std::vector<size_t> locations;  // indices into Config::locations, in file order
    SourcePosition where;
};

struct Config {
    std::string path;  // the file it was loaded from
    ServerConfig server;
    LogConfig log;
    std::optional<MetricsConfig> metrics;
    std::optional<TlsConfig> tls;
    std::optional<AcmeConfig> acme;
    Http2Config http2;
    std::vector<std::pair<std::string, std::string>> mime;  // extension (no dot) -> type
    std::vector<UpstreamConfig> upstreams;  // named ones in file order, then inline ones
    std::vector<LocationConfig> locations;  // every site's, in file order
    std::vector<SiteConfig> sites;          // at least one once loaded
    std::vector<LimitConfig> limits;        // [limit.NAME], in file order
    std::vector<CacheZoneConfig> caches;    // [cache.NAME], in file order
};

struct ConfigError {
    std::string file;
    SourcePosition where;
    std::string message;
    std::string to_string() const;  // "FILE:LINE:COL: message"
};

struct LoadResult {
    std::optional<Config> config;     // set only when errors is empty
    std::vector<ConfigError> errors;  // every problem found, in file order
};

// Reads and validates a config file. Relative paths in it are resolved
// against the file's folder.
LoadResult load_config_file(const std::string& path);

// The same on text already in memory; `path` names it in messages and its
// folder anchors relative paths.
LoadResult parse_config(std::string_view text, const std::string& path);

}  // namespace portico::config
