// The entry points: read the file, parse the TOML, hand each top-level table
// to its reader, and return either a whole Config or every error found.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include "config/sections.hpp"

namespace portico::config {

FileText read_whole_file(const std::string& path) {
    FileText result;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        result.error = std::strerror(errno);
        return result;
    }
    struct stat info {};
    if (::fstat(fd, &info) == 0 && S_ISDIR(info.st_mode)) {
        result.error = std::strerror(EISDIR);
    }
    char buffer[16 * 1024];
    while (result.error.empty()) {
        ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            result.error = std::strerror(errno);
        }
        if (n <= 0) {
            break;
        }
        result.text.append(buffer, static_cast<size_t>(n));
    }
    ::close(fd);
    return result;
}

namespace {

void read_top_level(const toml::table& root, LoadContext& context, Config& config) {
    // No [[location]] at all is valid: every request then gets a 404, which
    // is what a freshly installed server with only [server] should do.
    TableReader top(root, "", "the top level of the file", context.diagnostics);
    read_server(top.get("server"), context, config.server);
    if (const toml::node* log = top.get("log")) {
        read_log(*log, context, config.log);
    }
    if (const toml::node* metrics = top.get("metrics")) {
        read_metrics(*metrics, context, config.server, config.metrics);
    }
    if (const toml::node* tls = top.get("tls")) {
        read_tls(*tls, context, config.server, config.tls);
    }
    if (const toml::node* acme = top.get("acme")) read_acme(*acme, context, config.acme);
    if (const toml::node* http2 = top.get("http2")) {
        read_http2(*http2, context, config.http2);
    }
    if (const toml::node* mime = top.get("mime")) {
        read_mime(*mime, context, config.mime);
    }
    if (const toml::node* limits = top.get("limit")) {
        read_limit_zones(*limits, context, config.limits);
    }
    context.limits = &config.limits;
    if (const toml::node* caches = top.get("cache"))
        read_cache_zones(*caches, context, config.caches);
    context.caches = &config.caches;
    // Named upstreams first: locations refer to them and append inline ones.
    if (const toml::node* upstream = top.get("upstream")) {
        read_upstreams(*upstream, context, config.upstreams);
    }
    if (const toml::node* locations = top.get("location")) {
        read_locations(*locations, context, config.upstreams, config.locations);
    }
    read_sites(top.get("site"), context, config);
    top.finish();
}

}  // namespace

std::string resolve_path(const LoadContext& context, std::string_view path) {
    std::filesystem::path resolved = (context.folder / path).lexically_normal();
    std::string text = resolved.string();
    if (text.size() > 1 && text.ends_with('/')) {
        text.pop_back();
    }
    return text;
}

bool is_token(std::string_view text) {
    constexpr std::string_view symbols = "!#$%&'*+-.^_`|~";
    auto token_char = [symbols](unsigned char c) {
        return std::isalnum(c) || symbols.find(static_cast<char>(c)) != std::string_view::npos;
    };
    return !text.empty() && std::all_of(text.begin(), text.end(), token_char);
}

bool is_header_value(std::string_view text) {
    return text.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos;
}

bool read_header_value(TableReader& reader, std::string_view key, std::string& out) {
    std::string text;
    if (!reader.read_string(key, text)) {
        return false;
    }
    if (!is_header_value(text)) {
        reader.wrong(key, "a header value without line breaks");
        return false;
    }
    out = std::move(text);
    return true;
}

const toml::table* expect_table(const toml::node& node, std::string_view name,
                                LoadContext& context) {
    const toml::table* table = node.as_table();
    if (!table) {
        context.diagnostics.error(node.source(), std::string(name) + ": expected a table [" +
                                                     std::string(name) + "], got " +
                                                     describe(node));
    }
    return table;
}

LoadResult parse_config(std::string_view text, const std::string& path) {
    Diagnostics diagnostics(path);
    std::error_code no_cwd;
    std::filesystem::path absolute = std::filesystem::absolute(path, no_cwd);
    if (no_cwd) {
        absolute = path;  // the working directory is gone; the path as given is all we have
    }
    absolute = absolute.lexically_normal();
    LoadContext context{diagnostics, absolute.parent_path()};
    Config config;
    config.path = absolute.string();
    try {
        toml::table root = toml::parse(text, std::string_view(path));
        read_top_level(root, context, config);
    } catch (const toml::parse_error& error) {
        diagnostics.error(error.source(), "invalid TOML: " + std::string(error.description()));
    }
    LoadResult result;
    if (diagnostics.empty()) {
        result.config = std::move(config);
    }
    result.errors = diagnostics.take_sorted();
    return result;
}

LoadResult load_config_file(const std::string& path) {
    FileText file = read_whole_file(path);
    if (!file.error.empty()) {
        LoadResult result;
        result.errors.push_back({path, {}, "cannot read the config file: " + file.error});
        return result;
    }
    return parse_config(file.text, path);
}

}  // namespace portico::config
