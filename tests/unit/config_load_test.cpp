// Valid configs read into the right values, and the checks that need real
// files and directories.
#include <arpa/inet.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "config/config.hpp"
#include "skip.hpp"

using namespace portico::config;
using namespace std::chrono_literals;

namespace {

// A fresh directory under /tmp, removed with everything in it.
class TempDir {
public:
    TempDir() {
        char name[] = "/tmp/portico-config-test-XXXXXX";
        REQUIRE(::mkdtemp(name) != nullptr);
        path_ = name;
    }
    ~TempDir() {
        std::error_code ignored;
        std::filesystem::permissions(path_ / "locked", std::filesystem::perms::owner_all, ignored);
        std::filesystem::remove_all(path_, ignored);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    std::string file(const std::string& name) const { return (path_ / name).string(); }
    std::string make_dir(const std::string& name) const {
        std::filesystem::create_directories(path_ / name);
        return file(name);
    }
    std::string write(const std::string& name, const std::string& text) const {
        std::ofstream(path_ / name) << text;
        return file(name);
    }

    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

// The messages of parse_config's errors, from a child process that runs as
// user nobody: root reads a directory whatever its mode, nobody does not.
// Empty when the child cannot switch users here (no CAP_SETUID).
std::optional<std::vector<std::string>> error_messages_as_nobody(const std::string& text,
                                                                 const std::string& path) {
    const struct passwd* nobody = ::getpwnam("nobody");
    REQUIRE(nobody);
    const uid_t uid = nobody->pw_uid;
    const gid_t gid = nobody->pw_gid;
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::close(fds[0]);
        if (::setgroups(0, nullptr) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0) ::_exit(3);
        std::string out;
        for (const auto& error : parse_config(text, path).errors) out += error.message + '\0';
        for (size_t at = 0; at < out.size();) {
            ssize_t n = ::write(fds[1], out.data() + at, out.size() - at);
            if (n <= 0) ::_exit(4);
            at += static_cast<size_t>(n);
        }
        ::_exit(0);
    }
    ::close(fds[1]);
    std::string out;
    char buffer[4096];
    for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;) out.append(buffer, n);
    ::close(fds[0]);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 3) return std::nullopt;
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
    std::vector<std::string> messages;
    for (size_t at = 0, end; (end = out.find('\0', at)) != std::string::npos; at = end + 1)
        messages.push_back(out.substr(at, end - at));
    return messages;
}

// The example from the spec, verbatim.
constexpr const char* spec_example = R"toml(
[server]
listen = ["127.0.0.1:8080"]    # required; IPv6 as "[::1]:8080"
workers = "auto"               # "auto" or 1..256
max_connections = 4096         # per worker
keepalive_timeout = "75s"      # idle client connection; "0s" turns keep-alive off
keepalive_requests = 10000     # requests on one client connection, then close
header_timeout = "10s"         # the whole request head must arrive in this time, else 408
body_timeout = "60s"           # longest gap between request body reads, else 408
send_timeout = "60s"           # longest gap between writes to a slow client, else close
max_header_bytes = "16KiB"     # request line + headers; over it 431 (414 if the line alone)
max_body_bytes = "16MiB"       # over it 413, before reading the body when Content-Length says so
shutdown_timeout = "30s"
server_header = "portico"      # "" omits the Server header

[log]
level = "info"                 # trace, debug, info, warn, error
error = "stderr"               # or a file path
access = "off"                 # "off", "stdout", or a file path
access_format = "combined"     # "combined" or "json"; both carry the timings below

[metrics]                      # omit the table to turn the listener off
listen = "127.0.0.1:9145"

[mime]                         # extra or overriding types, by extension
wasm = "application/wasm"

[upstream.app]
servers = ["127.0.0.1:3000"]   # one or more
balance = "round_robin"        # round_robin, least_conn, ip_hash (sticky by client address)
keepalive = 32                 # idle connections kept per worker per server; 0 = no pooling
idle_timeout = "4s"            # how long a pooled idle connection is kept: below Node's
                               # 5 s server keepAliveTimeout, and capped by the upstream's
                               # own `Keep-Alive: timeout=N` when it sends one
connect_timeout = "5s"
read_timeout = "60s"           # longest gap between reads from the upstream
send_timeout = "60s"
max_fails = 1                  # failures within fail_timeout that mark a server down
fail_timeout = "10s"           # ...and for how long it then stays down

[[location]]
prefix = "/"                   # exactly one of: exact, prefix, regex
proxy = "app"

[[location]]
name = "assets"                # label in metrics and logs; default: the match text
regex = '\.(css|js|jpg|png|svg|ico|woff2?)$'
root = "www"
cache_control = "public, max-age=86400"
gzip_static = true
)toml";

// Every value different from its default, so a key that is read but not
// stored shows up.
constexpr const char* non_defaults = R"toml(
[server]
listen = ["127.0.0.1:0", "[::1]:8443"]
workers = 3
max_connections = 10
keepalive_timeout = "0s"
keepalive_requests = 7
header_timeout = "250ms"
body_timeout = "2m"
send_timeout = "1h"
max_header_bytes = 8192
max_body_bytes = "1m"
large_send_buffer = "8MiB"
shutdown_timeout = "0s"
server_header = ""

[log]
level = "debug"
error = "logs/error.log"
access = "stdout"
access_format = "json"

[mime]
".SVG" = "image/svg+xml"
Md = "text/markdown; charset=utf-8"

[upstream.zeta]
servers = ["localhost:3000", "[::1]:3001"]
balance = "least_conn"
keepalive = 0
max_connections = 64
idle_timeout = "0s"
connect_timeout = "1s"
read_timeout = "2s"
send_timeout = "3s"
max_fails = 0
fail_timeout = "4s"

[upstream.alpha]
servers = ["127.0.0.1:4000"]
balance = "ip_hash"

[[location]]
exact = "/health"
respond = { status = 204 }

[[location]]
prefix = "/api/"
stop_regex = true
proxy = "http://127.0.0.1:5000"
preserve_host = false
websocket = false
headers = { "X-Frame-Options" = "DENY", "Cache-Control" = "no-store" }

[[location]]
name = "legacy"
prefix = "/old/"
proxy = "http://127.0.0.1:5000"

[[location]]
prefix = "/static/"
root = "public/"
index = ["index.htm", "default.html"]
dotfiles = true
tcp_nopush = true
proxy = "alpha"

[[location]]
exact = "/teapot"
respond = { status = 418, body = "short and stout\n" }
)toml";

}  // namespace

TEST_CASE("the spec's example config reads into the documented values", "[config]") {
    TempDir dir;
    std::string www = dir.make_dir("www");
    LoadResult result = parse_config(spec_example, dir.file("portico.toml"));
    REQUIRE(result.errors.empty());
    REQUIRE(result.config);
    const Config& config = *result.config;
    CHECK(config.path == dir.file("portico.toml"));

    const ServerConfig& server = config.server;
    REQUIRE(server.listen.size() == 1);
    CHECK(server.listen[0].text == "127.0.0.1:8080");
    CHECK(server.workers == std::clamp(std::thread::hardware_concurrency(), 1u, 256u));
    CHECK(server.max_connections == 4096);
    CHECK(server.keepalive_timeout == 75s);
    CHECK(server.keepalive_requests == 10000);
    CHECK(server.header_timeout == 10s);
    CHECK(server.body_timeout == 60s);
    CHECK(server.send_timeout == 60s);
    CHECK(server.max_header_bytes == 16 * 1024);
    CHECK(server.max_body_bytes == 16 * 1024 * 1024);
    CHECK(server.large_send_buffer == 0);
    CHECK(server.shutdown_timeout == 30s);
    CHECK(server.server_header == "portico");

    CHECK(config.log.level == LogLevel::info);
    CHECK(config.log.error == "stderr");
    CHECK(config.log.access == "off");
    CHECK(config.log.access_format == AccessFormat::combined);

    REQUIRE(config.metrics);
    CHECK(config.metrics->listen.text == "127.0.0.1:9145");
    CHECK(config.mime ==
          std::vector<std::pair<std::string, std::string>>{{"wasm", "application/wasm"}});

    REQUIRE(config.upstreams.size() == 1);
    const UpstreamConfig& app = config.upstreams[0];
    CHECK(app.name == "app");
    REQUIRE(app.servers.size() == 1);
    CHECK(app.servers[0].text == "127.0.0.1:3000");
    CHECK(app.balance == Balance::round_robin);
    CHECK(app.keepalive == 32);
    CHECK(app.max_connections == 0);
    CHECK(app.idle_timeout == 4s);
    CHECK(app.connect_timeout == 5s);
    CHECK(app.read_timeout == 60s);
    CHECK(app.send_timeout == 60s);
    CHECK(app.max_fails == 1);
    CHECK(app.fail_timeout == 10s);
    CHECK(app.resolve == 0ms);

    REQUIRE(config.locations.size() == 2);
    const LocationConfig& root_location = config.locations[0];
    CHECK(root_location.match == MatchKind::prefix);
    CHECK(root_location.pattern == "/");
    CHECK(root_location.name == "/");
    CHECK(root_location.upstream == 0u);
    CHECK_FALSE(root_location.root);
    CHECK(root_location.where.line == 41);
    CHECK(root_location.where.column == 1);

    const LocationConfig& assets = config.locations[1];
    CHECK(assets.name == "assets");
    CHECK(assets.match == MatchKind::regex);
    CHECK(assets.pattern == R"(\.(css|js|jpg|png|svg|ico|woff2?)$)");
    CHECK(assets.root == www);
    CHECK(assets.cache_control == "public, max-age=86400");
    CHECK(assets.precompressed.contains(Coding::gzip));
    CHECK_FALSE(assets.precompressed.contains(Coding::br));
    CHECK_FALSE(assets.compress);
    CHECK_FALSE(assets.dotfiles);
    CHECK_FALSE(assets.tcp_nopush);
    CHECK(assets.index == std::vector<std::string>{"index.html"});
    CHECK_FALSE(assets.upstream);
    CHECK_FALSE(assets.respond);
}

TEST_CASE("a config with every value changed reads each one", "[config]") {
    TempDir dir;
    std::string public_dir = dir.make_dir("public");
    LoadResult result = parse_config(non_defaults, dir.file("portico.toml"));
    for (const auto& error : result.errors) {
        UNSCOPED_INFO(error.to_string());
    }
    REQUIRE(result.config);
    const Config& config = *result.config;

    const ServerConfig& server = config.server;
    REQUIRE(server.listen.size() == 2);
    CHECK(server.listen[1].storage.ss_family == AF_INET6);
    CHECK(server.workers == 3);
    CHECK(server.max_connections == 10);
    CHECK(server.keepalive_timeout == 0ms);
    CHECK(server.keepalive_requests == 7);
    CHECK(server.header_timeout == 250ms);
    CHECK(server.body_timeout == 2min);
    CHECK(server.send_timeout == 1h);
    CHECK(server.max_header_bytes == 8192);
    CHECK(server.max_body_bytes == 1024 * 1024);
    CHECK(server.large_send_buffer == 8 * 1024 * 1024);
    CHECK(server.shutdown_timeout == 0ms);
    CHECK(server.server_header.empty());

    CHECK(config.log.level == LogLevel::debug);
    CHECK(config.log.error == dir.file("logs/error.log"));
    CHECK(config.log.access == "stdout");
    CHECK(config.log.access_format == AccessFormat::json);
    CHECK_FALSE(config.metrics);
    // Lowercased, without the dot, in file order.
    CHECK(config.mime == std::vector<std::pair<std::string, std::string>>{
                             {"svg", "image/svg+xml"}, {"md", "text/markdown; charset=utf-8"}});

    // Named upstreams in file order (not TOML's key order), then inline ones.
    REQUIRE(config.upstreams.size() == 3);
    const UpstreamConfig& zeta = config.upstreams[0];
    CHECK(zeta.name == "zeta");
    REQUIRE(zeta.servers.size() == 2);
    CHECK(zeta.servers[0].text == "localhost:3000");
    CHECK(zeta.servers[1].text == "[::1]:3001");
    CHECK(zeta.balance == Balance::least_conn);
    CHECK(zeta.keepalive == 0);
    CHECK(zeta.max_connections == 64);
    CHECK(zeta.idle_timeout == 0ms);
    CHECK(zeta.connect_timeout == 1s);
    CHECK(zeta.read_timeout == 2s);
    CHECK(zeta.send_timeout == 3s);
    CHECK(zeta.max_fails == 0);
    CHECK(zeta.fail_timeout == 4s);
    CHECK(config.upstreams[1].name == "alpha");
    CHECK(config.upstreams[1].balance == Balance::ip_hash);
    const UpstreamConfig& inline_upstream = config.upstreams[2];
    CHECK(inline_upstream.name == "http://127.0.0.1:5000");
    REQUIRE(inline_upstream.servers.size() == 1);
    CHECK(inline_upstream.servers[0].text == "127.0.0.1:5000");
    CHECK(inline_upstream.keepalive == 32);

    REQUIRE(config.locations.size() == 5);
    const LocationConfig& health = config.locations[0];
    CHECK(health.match == MatchKind::exact);
    REQUIRE(health.respond);
    CHECK(health.respond->status == 204);
    CHECK(health.respond->body.empty());

    const LocationConfig& api = config.locations[1];
    CHECK(api.stop_regex);
    CHECK(api.upstream == 2u);
    CHECK_FALSE(api.preserve_host);
    CHECK_FALSE(api.websocket);
    REQUIRE(api.headers.size() == 2);
    CHECK(api.headers[0].name == "X-Frame-Options");
    CHECK(api.headers[0].value.source == "DENY");
    CHECK(api.headers[0].value.is_literal());
    CHECK(api.headers[1].name == "Cache-Control");
    CHECK(api.headers[1].value.source == "no-store");

    // The same URL in two locations shares one inline upstream.
    CHECK(config.locations[2].name == "legacy");
    CHECK(config.locations[2].upstream == 2u);

    const LocationConfig& files = config.locations[3];
    CHECK(files.root == public_dir);
    CHECK(files.index == std::vector<std::string>{"index.htm", "default.html"});
    CHECK(files.dotfiles);
    CHECK(files.tcp_nopush);
    CHECK(files.upstream == 1u);
    CHECK(files.preserve_host);

    REQUIRE(config.locations[4].respond);
    CHECK(config.locations[4].respond->status == 418);
    CHECK(config.locations[4].respond->body == "short and stout\n");
}

TEST_CASE("a config with only [server].listen takes every default", "[config]") {
    LoadResult result = parse_config("[server]\nlisten = [\"127.0.0.1:0\"]\n", "/tmp/x/p.toml");
    REQUIRE(result.config);
    const Config& config = *result.config;
    CHECK(config.server.workers == 1);
    CHECK(config.server.keepalive_timeout == 75s);
    CHECK(config.log.error == "stderr");
    CHECK(config.log.access == "off");
    CHECK_FALSE(config.metrics);
    CHECK(config.upstreams.empty());
    CHECK(config.locations.empty());
    CHECK(config.http2.enabled);
    CHECK_FALSE(config.http2.cleartext);
    CHECK(config.http2.max_concurrent_streams == 128);
}

TEST_CASE("[http2] reads its three keys", "[config]") {
    LoadResult result = parse_config("[server]\nlisten = [\"127.0.0.1:0\"]\n[http2]\nenabled = false\n"
                                     "cleartext = true\nmax_concurrent_streams = 16\n",
                                     "/tmp/x/p.toml");
    REQUIRE(result.config);
    CHECK_FALSE(result.config->http2.enabled);
    CHECK(result.config->http2.cleartext);
    CHECK(result.config->http2.max_concurrent_streams == 16);
}

TEST_CASE("user names a system user, read into its uid and own group", "[config]") {
    // nobody exists on every Debian system; its ids vary elsewhere.
    const struct passwd* nobody = getpwnam("nobody");
    REQUIRE(nobody);
    LoadResult result = parse_config(
        "[server]\nlisten = [\"127.0.0.1:0\"]\nuser = \"nobody\"\n", "/tmp/x/p.toml");
    REQUIRE(result.config);
    REQUIRE(result.config->server.user);
    CHECK(result.config->server.user->name == "nobody");
    CHECK(result.config->server.user->uid == nobody->pw_uid);
    CHECK(result.config->server.user->gid == nobody->pw_gid);

    LoadResult without = parse_config("[server]\nlisten = [\"127.0.0.1:0\"]\n", "/tmp/x/p.toml");
    REQUIRE(without.config);
    CHECK_FALSE(without.config->server.user);
}

TEST_CASE("load_config_file reads the file and records its path", "[config]") {
    TempDir dir;
    std::string path = dir.write("portico.toml", "[server]\nlisten = [\"127.0.0.1:0\"]\n");
    LoadResult result = load_config_file(path);
    REQUIRE(result.config);
    CHECK(result.config->path == path);
}

TEST_CASE("an unreadable config file is one error naming the file", "[config]") {
    TempDir dir;
    std::string missing = dir.file("missing.toml");
    LoadResult result = load_config_file(missing);
    CHECK_FALSE(result.config);
    REQUIRE(result.errors.size() == 1);
    CHECK(result.errors[0].where.line == 0);
    CHECK(result.errors[0].to_string() ==
          missing + ": cannot read the config file: No such file or directory");

    LoadResult directory = load_config_file(dir.make_dir("conf.d"));
    REQUIRE(directory.errors.size() == 1);
    CHECK_THAT(directory.errors[0].message, Catch::Contains("Is a directory"));
}

TEST_CASE("root must be a readable directory", "[config]") {
    TempDir dir;
    dir.write("file.txt", "not a directory");
    std::string locked = dir.make_dir("locked");
    auto config_with_root = [](const std::string& root) {
        return "[server]\nlisten = [\"127.0.0.1:0\"]\n[[location]]\nprefix = \"/\"\nroot = \"" +
               root + "\"\n";
    };

    LoadResult file_root = parse_config(config_with_root("file.txt"), dir.file("portico.toml"));
    REQUIRE(file_root.errors.size() == 1);
    CHECK(file_root.errors[0].to_string() ==
          dir.file("portico.toml") + ":5:8: location '/': root '" + dir.file("file.txt") +
              "' is not a readable directory: Not a directory");

    ::chmod(locked.c_str(), 0);
    if (::geteuid() != 0) {
        LoadResult locked_root = parse_config(config_with_root("locked"), dir.file("portico.toml"));
        REQUIRE(locked_root.errors.size() == 1);
        CHECK_THAT(locked_root.errors[0].message, Catch::EndsWith("Permission denied"));
        return;
    }
    // As root (CI), every directory is readable: the check runs as nobody,
    // who may search the test's directory but not read `locked`.
    ::chmod(dir.path().c_str(), 0711);
    auto messages = error_messages_as_nobody(config_with_root("locked"), dir.file("portico.toml"));
    if (!messages) PORTICO_SKIP("running as root without the right to switch to user nobody");
    REQUIRE(messages->size() == 1);
    CHECK_THAT(messages->front(), Catch::EndsWith("Permission denied"));
}

TEST_CASE("a proxy URL without a port goes to port 80", "[config]") {
    LoadResult result = parse_config(
        "[server]\nlisten = [\"127.0.0.1:0\"]\n[[location]]\nprefix = \"/\"\n"
        "proxy = \"http://127.0.0.1/\"\n",
        "/tmp/x/p.toml");
    REQUIRE(result.config);
    REQUIRE(result.config->upstreams.size() == 1);
    const UpstreamConfig& upstream = result.config->upstreams[0];
    CHECK(upstream.name == "http://127.0.0.1");
    REQUIRE(upstream.servers.size() == 1);
    CHECK(upstream.servers[0].text == "127.0.0.1:80");
    const auto& sin = reinterpret_cast<const sockaddr_in&>(upstream.servers[0].storage);
    CHECK(ntohs(sin.sin_port) == 80);
}

TEST_CASE("keepalive defaults to max_connections when only that is set", "[config]") {
    auto upstream_with = [](const std::string& options) {
        LoadResult result = parse_config(
            "[server]\nlisten = [\"127.0.0.1:0\"]\n[upstream.app]\n"
            "servers = [\"127.0.0.1:3000\"]\n" + options,
            "/tmp/x/p.toml");
        REQUIRE(result.config);
        REQUIRE(result.config->upstreams.size() == 1);
        return result.config->upstreams[0];
    };
    // Above 32, the old default closed, under load, connections the next
    // burst had to reopen.
    CHECK(upstream_with("max_connections = 64\n").keepalive == 64);
    CHECK(upstream_with("max_connections = 8\n").keepalive == 8);
    // Without a limit, the plain default; an explicit keepalive always wins.
    CHECK(upstream_with("").keepalive == 32);
    CHECK(upstream_with("max_connections = 64\nkeepalive = 16\n").keepalive == 16);
    CHECK(upstream_with("keepalive = 0\nmax_connections = 64\n").keepalive == 0);
}

TEST_CASE("with resolve, host names are left to the workers and IP literals stay", "[config]") {
    // A Compose or Kubernetes config validates anywhere: the names are not
    // looked up at load.
    LoadResult result = parse_config(
        "[server]\nlisten = [\"127.0.0.1:0\"]\n[upstream.app]\n"
        "servers = [\"app.invalid:3000\", \"127.0.0.1:3001\"]\nresolve = \"10s\"\n",
        "/tmp/x/p.toml");
    REQUIRE(result.errors.empty());
    const UpstreamConfig& upstream = result.config->upstreams[0];
    CHECK(upstream.resolve == 10s);
    REQUIRE(upstream.servers.size() == 2);
    CHECK(upstream.servers[0].resolved_by_workers());
    CHECK(upstream.servers[0].host == "app.invalid");
    CHECK(upstream.servers[0].port == 3000);
    CHECK_FALSE(upstream.servers[1].resolved_by_workers());
    CHECK(upstream.servers[1].length == sizeof(sockaddr_in));

    // Without resolve, a name is looked up at load, as before.
    LoadResult at_load = parse_config(
        "[server]\nlisten = [\"127.0.0.1:0\"]\n[upstream.app]\n"
        "servers = [\"localhost:3000\"]\nresolve = \"0s\"\n",
        "/tmp/x/p.toml");
    REQUIRE(at_load.config);
    CHECK_FALSE(at_load.config->upstreams[0].servers[0].resolved_by_workers());
    CHECK(at_load.config->upstreams[0].servers[0].length > 0);
}

TEST_CASE("compress and precompressed read as the spec's edge example writes them", "[config]") {
    TempDir dir;
    std::string www = dir.make_dir("www");
    const std::string toml = R"toml(
[server]
listen = ["127.0.0.1:0"]
[[location]]
prefix = "/"
proxy = "http://127.0.0.1:3000"
compress = true
[[location]]
prefix = "/assets/"
root = "www"
precompressed = ["br", "zstd", "gzip"]
compress = { types = ["Text/*", "application/json"], min_length = "1KiB", gzip_level = 9, brotli_level = 11, zstd_level = 19 }
[[location]]
prefix = "/zst/"
root = "www"
precompressed = ["zstd"]
compress = false
)toml";
    LoadResult result = parse_config(toml, dir.file("portico.toml"));
    for (const auto& error : result.errors) UNSCOPED_INFO(error.to_string());
    REQUIRE(result.config);
    const auto& locations = result.config->locations;
    REQUIRE(locations.size() == 3);

    // compress = true: the spec's defaults.
    REQUIRE(locations[0].compress);
    const CompressConfig& defaults = *locations[0].compress;
    CHECK(defaults.types == std::vector<std::string>{"text/*", "application/javascript",
                                                      "application/json", "image/svg+xml"});
    CHECK(defaults.min_length == 256);
    CHECK(defaults.level(Coding::gzip) == 5);
    CHECK(defaults.level(Coding::br) == 4);
    CHECK(defaults.level(Coding::zstd) == 3);
    CHECK(locations[0].precompressed.empty());

    REQUIRE(locations[1].compress);
    const CompressConfig& table = *locations[1].compress;
    CHECK(table.types == std::vector<std::string>{"text/*", "application/json"});  // lowercased
    CHECK(table.min_length == 1024);
    CHECK(table.level(Coding::gzip) == 9);
    CHECK(table.level(Coding::br) == 11);
    CHECK(table.level(Coding::zstd) == 19);
    CHECK(locations[1].precompressed == CodingSet::all());

    CHECK_FALSE(locations[2].compress);
    CodingSet zstd_only;
    zstd_only.add(Coding::zstd);
    CHECK(locations[2].precompressed == zstd_only);
}
