// Broken config files, each with where the error must point and what it must
// say. Paths are fake (nothing here reads the disk except a missing root).
#include <sstream>

#include <catch2/catch.hpp>

#include "broken_configs.hpp"
#include "config/config.hpp"

using portico::config::LoadResult;
using portico::config::parse_config;

namespace {

// A folder that does not exist, so no relative root resolves to a real one
// (a clone at /tmp/x once made "../x/./www/" readable).
constexpr const char* fake_path = "/nonexistent-portico-conf/portico.toml";

using portico::test::all_messages;
using portico::test::BrokenConfig;

const BrokenConfig broken_configs[] = {
    {"invalid TOML",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"\n",
     "2:25", "invalid TOML: "},
    {"no [server]",
     "[log]\n"
     "level = \"info\"\n",
     "1:1", "[server] is missing"},
    {"no listen",
     "[server]\n"
     "workers = 2\n",
     "1:1", "server.listen is required"},
    {"unknown key in [server], with a suggestion",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "workerz = 2\n",
     "3:1", "unknown key 'workerz' in [server]; did you mean 'workers'?"},
    {"unknown top-level table",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[proxy]\n"
     "x = 1\n",
     "3:2", "unknown key 'proxy' in the top level of the file"},
    {"unknown key in [log]",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[log]\n"
     "format = \"json\"\n",
     "4:1", "unknown key 'format' in [log]"},
    {"unknown key in [upstream.NAME]",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[upstream.app]\n"
     "servers = [\"127.0.0.1:3000\"]\n"
     "balanse = \"least_conn\"\n",
     "5:1", "unknown key 'balanse' in [upstream.app]; did you mean 'balance'?"},
    {"unknown key in respond",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[[location]]\n"
     "exact = \"/health\"\n"
     "respond = { status = 200, text = \"ok\" }\n",
     "5:27", "unknown key 'text' in respond of location '/health'"},
    {"listen is not an array",
     "[server]\n"
     "listen = \"127.0.0.1:8080\"\n",
     "2:10", "server.listen: expected a non-empty array"},
    {"listen is empty",
     "[server]\n"
     "listen = []\n",
     "2:10", "got an empty array"},
    {"listen with a host name",
     "[server]\n"
     "listen = [\"localhost:8080\"]\n",
     "2:11", "server.listen: \"localhost:8080\": 'localhost' is not an IP address"},
    {"listen port out of range",
     "[server]\n"
     "listen = [\"127.0.0.1:0\", \"127.0.0.1:70000\"]\n",
     "2:26", "port '70000' is not a number 0..65535"},
    {"wrong type: workers as a word",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "workers = \"many\"\n",
     "3:11", "server.workers: expected \"auto\" or an integer 1..256, got \"many\""},
    {"out of range: workers",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "workers = 257\n",
     "3:11", "server.workers: expected a value in 1..256, got 257"},
    {"out of range: max_connections",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "max_connections = 0\n",
     "3:19", "server.max_connections: expected a value in 1..4294967295, got 0"},
    {"out of range: keepalive_requests",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "keepalive_requests = -1\n",
     "3:22", "server.keepalive_requests: expected a value in 1..4294967295, got -1"},
    {"bad duration",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "keepalive_timeout = \"75 seconds\"\n",
     "3:21",
     "server.keepalive_timeout: expected a duration like \"75s\" or \"250ms\", got \"75 seconds\""},
    {"duration as a bare number",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "header_timeout = 10\n",
     "3:18", "server.header_timeout: expected a duration like \"75s\" or \"250ms\", got 10"},
    {"zero header_timeout",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "header_timeout = \"0s\"\n",
     "3:18", "server.header_timeout: expected a duration of at least 1ms"},
    {"bad size",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "max_body_bytes = \"16 MB\"\n",
     "3:18",
     "server.max_body_bytes: expected a size like 16384, \"16KiB\" or \"10MiB\", got \"16 MB\""},
    {"negative size",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "max_body_bytes = -5\n",
     "3:18", "server.max_body_bytes: expected a size like"},
    {"out of range: max_header_bytes",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "max_header_bytes = \"2MiB\"\n",
     "3:20", "server.max_header_bytes: expected a size from 1024 to 1048576 bytes, got \"2MiB\""},
    {"out of range: large_send_buffer",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "large_send_buffer = \"2GiB\"\n",
     "3:21", "server.large_send_buffer: expected a size from 0 to 1073741824 bytes, got \"2GiB\""},
    {"server_header with a line break",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "server_header = \"a\\r\\nX-Evil: 1\"\n",
     "3:17", "server.server_header: expected a header value without line breaks"},
    {"a user that does not exist",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "user = \"no-such-user-portico\"\n",
     "3:8", "server.user: no such user 'no-such-user-portico'"},
    {"an empty user name",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "user = \"\"\n",
     "3:8", "server.user: expected a user name"},
    {"log level",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[log]\n"
     "level = \"verbose\"\n",
     "4:9",
     "log.level: expected one of \"trace\", \"debug\", \"info\", \"warn\", \"error\", got "
     "\"verbose\""},
    {"access_format",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[log]\n"
     "access_format = \"common\"\n",
     "4:17", "log.access_format: expected one of \"combined\", \"json\", got \"common\""},
    {"error log turned off",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[log]\n"
     "error = \"off\"\n",
     "4:9", "log.error: expected \"stderr\" or a file path, got \"off\""},
    {"[metrics] without listen",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[metrics]\n",
     "3:1", "metrics.listen is required"},
    {"metrics on a server address",
     "[server]\n"
     "listen = [\"127.0.0.1:8080\"]\n"
     "[metrics]\n"
     "listen = \"127.0.0.1:8080\"\n",
     "4:10", "metrics.listen: expected an address not also in server.listen"},
    {"mime type without a slash",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[mime]\n"
     "wasm = \"wasm\"\n",
     "4:8", "mime.wasm: expected a media type like \"application/wasm\", got \"wasm\""},
    {"mime extension twice, in different case",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[mime]\n"
     "svg = \"image/svg+xml\"\n"
     "SVG = \"image/svg\"\n",
     "5:1", "mime.SVG: extension 'svg' is already mapped"},
    {"upstream without servers",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[upstream.app]\n"
     "keepalive = 8\n",
     "3:1", "upstream.app.servers is required"},
    {"upstream balance",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[upstream.app]\n"
     "servers = [\"127.0.0.1:3000\"]\n"
     "balance = \"random\"\n",
     "5:11", "upstream.app.balance: expected one of \"round_robin\", \"least_conn\", \"ip_hash\""},
    {"upstream max_fails negative",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[upstream.app]\n"
     "servers = [\"127.0.0.1:3000\"]\n"
     "max_fails = -1\n",
     "5:13", "upstream.app.max_fails: expected a value in 0..4294967295, got -1"},
    {"upstream max_connections negative",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[upstream.app]\n"
     "servers = [\"127.0.0.1:3000\"]\n"
     "max_connections = -5\n",
     "5:19", "upstream.app.max_connections: expected a value in 0..4294967295, got -5"},
    {"upstream server written as a URL",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[upstream.app]\n"
     "servers = [\"http://127.0.0.1:3000\"]\n",
     "4:12",
     "upstream.app.servers: \"http://127.0.0.1:3000\": expected \"host:port\", not a URL: "
     "without \"http://\""},
    {"upstream server that does not resolve",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[upstream.app]\n"
     "servers = [\"no-such-host.invalid:3000\"]\n",
     "4:12", "cannot resolve host 'no-such-host.invalid'"},
    {"upstream resolve too often",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[upstream.app]\n"
     "servers = [\"app:3000\"]\n"
     "resolve = \"10ms\"\n",
     "5:11", "upstream.app.resolve: expected \"0s\" (resolve at load only) or at least \"100ms\""},
    {"upstream server with resolve that is not a host name",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[upstream.app]\n"
     "resolve = \"10s\"\n"
     "servers = [\"app/v1:3000\"]\n",
     "5:12", "'app/v1' is not a host name"},
    {"[location] instead of [[location]]",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[location]\n"
     "prefix = \"/\"\n",
     "3:1", "location: expected [[location]] tables (double brackets)"},
    {"location with no match kind",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[[location]]\n"
     "respond = { status = 204 }\n",
     "3:1", "location #1: needs exactly one of exact, prefix or regex"},
    {"location with two match kinds",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[[location]]\n"
     "prefix = \"/\"\n"
     "respond = { status = 204 }\n"
     "[[location]]\n"
     "exact = \"/a\"\n"
     "regex = \"^/a\"\n"
     "respond = { status = 204 }\n",
     "6:1", "location #2: has both exact and regex; a location matches in exactly one way"},
    {"prefix not starting with a slash",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[[location]]\n"
     "prefix = \"api\"\n"
     "respond = { status = 204 }\n",
     "4:10", "location 'api': prefix: expected a path starting with '/', got \"api\""},
    {"bad regex",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[[location]]\n"
     "regex = '\\.(css|js$'\n"
     "respond = { status = 204 }\n",
     "4:9", "regex: \"\\\\.(css|js$\" is not a valid RE2 regular expression: missing )"},
    {"a location named \"-\", the label of requests without one",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[[location]]\n"
     "prefix = \"/\"\n"
     "name = \"-\"\n"
     "respond = { status = 204 }\n",
     "5:8", "the name \"-\" is kept for requests that match no location"},
    {"stop_regex on an exact location",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[[location]]\n"
     "exact = \"/a\"\n"
     "stop_regex = true\n"
     "respond = { status = 204 }\n",
     "5:14", "location '/a': stop_regex applies only to prefix locations"},
    {"location with nothing to do",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[[location]]\n"
     "prefix = \"/\"\n",
     "3:1", "location '/': needs something to do: root, alias, proxy, respond"},
    {"respond with proxy",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[[location]]\n"
     "prefix = \"/\"\n"
     "proxy = \"http://127.0.0.1:3000\"\n"
     "respond = { status = 204 }\n",
     "6:11", "location '/': respond cannot be combined with root, alias or proxy"},
    {"respond status out of range",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[[location]]\n"
     "exact = \"/health\"\n"
     "respond = { status = 600 }\n",
     "5:22", "location '/health': respond.status: expected a value in 100..599, got 600"},
    {"proxy to an unknown upstream",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[upstream.app]\n"
     "servers = [\"127.0.0.1:3000\"]\n"
     "[[location]]\n"
     "prefix = \"/\"\n"
     "proxy = \"ap\"\n",
     "7:9",
     "location '/': proxy names unknown upstream 'ap'; define [upstream.ap] or use "
     "\"http://host:port\""},
    {"proxy to another scheme",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[[location]]\n"
     "prefix = \"/\"\n"
     "proxy = \"ftp://127.0.0.1:3000\"\n",
     "5:9", "only http:// and https:// upstreams are supported"},
    {"upstream tls not a table",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[upstream.api]\n"
     "servers = [\"127.0.0.1:3000\"]\n"
     "tls = true\n",
     "5:7", "upstream.api.tls: expected a table"},
    {"upstream tls verify not a boolean",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[upstream.api]\n"
     "servers = [\"127.0.0.1:3000\"]\n"
     "tls = { verify = \"yes\" }\n",
     "5:18", "upstream.api.tls.verify"},
    {"upstream tls empty server_name",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[upstream.api]\n"
     "servers = [\"127.0.0.1:3000\"]\n"
     "tls = { server_name = \"\" }\n",
     "5:23", "upstream.api.tls.server_name: expected a host name"},
    {"upstream tls cert without key",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[upstream.api]\n"
     "servers = [\"127.0.0.1:3000\"]\n"
     "tls = { cert = \"client.pem\" }\n",
     "5:7", "upstream.api.tls.key is required"},
    {"upstream tls unknown key",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[upstream.api]\n"
     "servers = [\"127.0.0.1:3000\"]\n"
     "tls = { verfy = false }\n",
     "5:9", "unknown key 'verfy'"},
    {"proxy URL with a path in a regex location",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[[location]]\n"
     "regex = \"^/a\"\n"
     "proxy = \"http://127.0.0.1:3000/app\"\n",
     "5:9", "only a prefix location may have one"},
    {"preserve_host without proxy",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[[location]]\n"
     "exact = \"/a\"\n"
     "respond = { status = 204 }\n"
     "preserve_host = false\n",
     "6:17", "location '/a': preserve_host: applies only to a location with proxy"},
    {"missing root",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[[location]]\n"
     "prefix = \"/\"\n"
     "root = \"/nonexistent/portico-test-root\"\n",
     "5:8",
     "location '/': root '/nonexistent/portico-test-root' is not a readable directory: No such "
     "file or directory"},
    {"relative root is resolved against the config folder",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[[location]]\n"
     "prefix = \"/\"\n"
     "root = \"../nonexistent-portico-conf/./www/\"\n",
     "5:8", "root '/nonexistent-portico-conf/www' is not a readable directory"},
    {"bad header name",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[[location]]\n"
     "exact = \"/a\"\n"
     "respond = { status = 204 }\n"
     "headers = { \"X Frame\" = \"DENY\" }\n",
     "6:13", "location '/a': headers.X Frame: not a valid header name"},
    {"header value with a line break",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[[location]]\n"
     "exact = \"/a\"\n"
     "respond = { status = 204 }\n"
     "headers = { X-Frame-Options = \"DENY\\r\\nSet-Cookie: a=b\" }\n",
     "6:31", "location '/a': headers.X-Frame-Options: expected a string without line breaks"},
    {"framing header",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[[location]]\n"
     "exact = \"/a\"\n"
     "respond = { status = 204 }\n"
     "headers = { content-length = \"3\" }\n",
     "6:13", "headers.content-length: set by portico itself"},
    {"duplicate prefix location",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[[location]]\n"
     "prefix = \"/a\"\n"
     "respond = { status = 204 }\n"
     "[[location]]\n"
     "prefix = \"/a\"\n"
     "respond = { status = 200 }\n",
     "6:1", "location '/a': the same prefix location is already defined on line 3"},
    {"compress is neither a boolean nor a table",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[[location]]\n"
     "prefix = \"/\"\n"
     "proxy = \"http://127.0.0.1:3000\"\n"
     "compress = \"gzip\"\n",
     "6:12", "location '/': compress: expected true, false, or a table"},
    {"compress level out of the library's range",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[[location]]\n"
     "prefix = \"/\"\n"
     "proxy = \"http://127.0.0.1:3000\"\n"
     "compress = { gzip_level = 10 }\n",
     "6:27", "location '/': compress.gzip_level: expected a value in 1..9, got 10"},
    {"unknown key in compress, with a suggestion",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[[location]]\n"
     "prefix = \"/\"\n"
     "proxy = \"http://127.0.0.1:3000\"\n"
     "compress = { brotli_levl = 5 }\n",
     "6:14", "unknown key 'brotli_levl' in compress of location '/'; did you mean 'brotli_level'?"},
    {"compress types not a media type",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[[location]]\n"
     "prefix = \"/\"\n"
     "proxy = \"http://127.0.0.1:3000\"\n"
     "compress = { types = [\"text\"] }\n",
     "6:22", "compress.types: \"text\" is not a media type like \"text/css\""},
    {"compress on a respond location",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[[location]]\n"
     "exact = \"/health\"\n"
     "respond = { status = 200, body = \"ok\" }\n"
     "compress = true\n",
     "6:12", "location '/health': compress: applies only to a location with root or proxy"},
    {"precompressed with an unknown coding",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[[location]]\n"
     "prefix = \"/\"\n"
     "root = \"/\"\n"
     "precompressed = [\"br\", \"deflate\"]\n",
     "6:24",
     "location '/': precompressed: expected one of \"br\", \"zstd\", \"gzip\", got \"deflate\""},
    {"precompressed lists a coding twice",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[[location]]\n"
     "prefix = \"/\"\n"
     "root = \"/\"\n"
     "precompressed = [\"gzip\", \"gzip\"]\n",
     "6:26", "precompressed: \"gzip\" is listed twice"},
    {"precompressed and gzip_static together",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[[location]]\n"
     "prefix = \"/\"\n"
     "root = \"/\"\n"
     "precompressed = [\"br\"]\n"
     "gzip_static = true\n",
     "7:15", "gzip_static: is the older spelling of precompressed = [\"gzip\"]"},
    {"precompressed without root",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[[location]]\n"
     "prefix = \"/\"\n"
     "proxy = \"http://127.0.0.1:3000\"\n"
     "precompressed = [\"br\"]\n",
     "6:17", "location '/': precompressed: applies only to a location with root"},
    {"tcp_nopush without root",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[[location]]\n"
     "prefix = \"/\"\n"
     "proxy = \"http://127.0.0.1:3000\"\n"
     "tcp_nopush = true\n",
     "6:14", "location '/': tcp_nopush: applies only to a location with root"},
    {"max_concurrent_streams out of range",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[http2]\n"
     "max_concurrent_streams = 0\n",
     "4:26", "http2.max_concurrent_streams"},
    {"an unknown key in [http2]",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[http2]\n"
     "clear_text = true\n",
     "4:1", "clear_text"},
    {"[http2] cleartext not a boolean",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "[http2]\n"
     "cleartext = \"yes\"\n",
     "4:13", "http2.cleartext"},
    {"worker_scheduling not a policy we set",
     "[server]\n"
     "listen = [\"127.0.0.1:0\"]\n"
     "worker_scheduling = \"fifo\"\n",
     "3:21", "server.worker_scheduling: expected one of \"batch\", \"normal\", got \"fifo\""},
};

}  // namespace

TEST_CASE("each broken config is reported at its line and column", "[config]") {
    portico::test::check_broken_configs(broken_configs, fake_path);
}

TEST_CASE("every problem in a file is reported, in file order", "[config]") {
    const char* toml =
        "[server]\n"
        "listen = [\"127.0.0.1:0\"]\n"
        "workers = 0\n"
        "[[location]]\n"
        "prefix = \"/\"\n"
        "proxy = \"nowhere\"\n"
        "[log]\n"
        "level = \"loud\"\n"
        "[upstream.app]\n"
        "servers = [\"127.0.0.1:3000\"]\n"
        "idle_timeout = \"4\"\n"
        "colour = \"blue\"\n";
    LoadResult result = parse_config(toml, fake_path);
    INFO("errors:" << all_messages(result));
    CHECK_FALSE(result.config);
    REQUIRE(result.errors.size() == 5);
    CHECK(result.errors[0].where.line == 3);
    CHECK_THAT(result.errors[0].message, Catch::StartsWith("server.workers:"));
    CHECK(result.errors[1].where.line == 6);
    CHECK_THAT(result.errors[1].message, Catch::Contains("unknown upstream 'nowhere'"));
    CHECK(result.errors[2].where.line == 8);
    CHECK_THAT(result.errors[2].message, Catch::StartsWith("log.level:"));
    CHECK(result.errors[3].where.line == 11);
    CHECK_THAT(result.errors[3].message, Catch::StartsWith("upstream.app.idle_timeout:"));
    CHECK(result.errors[4].where.line == 12);
    CHECK_THAT(result.errors[4].message, Catch::StartsWith("unknown key 'colour'"));
    for (const auto& error : result.errors) {
        CHECK(error.file == fake_path);
    }
}

TEST_CASE("an invalid upstream is not also reported as unknown by its locations", "[config]") {
    const char* toml =
        "[server]\n"
        "listen = [\"127.0.0.1:0\"]\n"
        "[upstream.app]\n"
        "servers = []\n"
        "[[location]]\n"
        "prefix = \"/\"\n"
        "proxy = \"app\"\n";
    LoadResult result = parse_config(toml, fake_path);
    INFO("errors:" << all_messages(result));
    REQUIRE(result.errors.size() == 1);
    CHECK(result.errors[0].where.line == 4);
}
