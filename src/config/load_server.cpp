// [server], [log], [metrics] and [mime].
#include <netinet/in.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include "config/sections.hpp"

namespace portico::config {

namespace {

constexpr unsigned max_workers = 256;

void read_workers(TableReader& reader, unsigned& workers) {
    const toml::node* value = reader.get("workers");
    if (!value) {
        return;
    }
    if (const auto* text = value->as_string(); text && text->get() == "auto") {
        // Capped like an explicit count: past 256 workers the per-worker
        // pools and counters cost more than the parallelism gains.
        workers = std::clamp(std::thread::hardware_concurrency(), 1u, max_workers);
        return;
    }
    if (!value->is_integer()) {
        reader.wrong("workers", *value, "\"auto\" or an integer 1..256");
        return;
    }
    reader.read_bounded("workers", workers, 1u, max_workers);
}

// Looked up now, in the passwd database (files, LDAP, whatever NSS says), so
// an unknown name is a config error with its line rather than a worker that
// cannot start.
void read_user(TableReader& reader, std::optional<RunAsUser>& user) {
    std::string name;
    if (!reader.read_string("user", name)) {
        return;
    }
    if (name.empty()) {
        reader.wrong("user", "a user name");
        return;
    }
    long suggested = sysconf(_SC_GETPW_R_SIZE_MAX);
    std::vector<char> buffer(suggested > 0 ? static_cast<size_t>(suggested) : 16384);
    struct passwd entry;
    struct passwd* found = nullptr;
    int error;
    while ((error = getpwnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found)) ==
           ERANGE)
        buffer.resize(buffer.size() * 2);
    // glibc says "not found" with 0 and no entry; other NSS modules with ENOENT.
    if (error != 0 && error != ENOENT) {
        reader.report("user", *reader.get("user"),
                      "cannot look up user '" + name + "': " + std::strerror(error));
    } else if (!found) {
        reader.report("user", *reader.get("user"), "no such user '" + name + "'");
    } else {
        user = RunAsUser{name, entry.pw_uid, entry.pw_gid};
    }
}

// The words in `destinations` name streams, not files; anything else is a
// file, relative to the config folder. A stream word that belongs to the
// other log ("off" for the error log) is refused rather than taken as a file
// name, which would surprise everyone.
void read_log_target(TableReader& reader, std::string_view key,
                     std::initializer_list<std::string_view> destinations, LoadContext& context,
                     std::string& out) {
    std::string text;
    if (!reader.read_string(key, text)) {
        return;
    }
    bool destination =
        std::find(destinations.begin(), destinations.end(), text) != destinations.end();
    bool stream_word = text == "stderr" || text == "stdout" || text == "off";
    if (text.empty() || (stream_word && !destination)) {
        std::string expected;
        for (std::string_view word : destinations) {
            expected += "\"" + std::string(word) + "\" or ";
        }
        reader.wrong(key, expected + "a file path");
        return;
    }
    out = destination ? text : resolve_path(context, text);
}

void read_mime_entry(const toml::key& key, const toml::node& value, LoadContext& context,
                     std::vector<std::pair<std::string, std::string>>& mime) {
    std::string extension(key.str());
    if (extension.starts_with('.')) {
        extension.erase(0, 1);
    }
    std::transform(extension.begin(), extension.end(), extension.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    std::string field = "mime." + std::string(key.str());
    if (extension.empty() || extension.find('/') != std::string::npos) {
        context.diagnostics.error(key.source(),
                                  field + ": expected a file extension like \"wasm\"");
        return;
    }
    const auto* type = value.as_string();
    if (!type || type->get().find('/') == std::string::npos || !is_header_value(type->get())) {
        context.diagnostics.error(value.source(), field +
                                                      ": expected a media type like "
                                                      "\"application/wasm\", got " +
                                                      describe(value));
        return;
    }
    auto same_extension = [&](const auto& entry) { return entry.first == extension; };
    if (std::any_of(mime.begin(), mime.end(), same_extension)) {
        context.diagnostics.error(key.source(), field + ": extension '" + extension +
                                                    "' is already mapped (case is ignored)");
        return;
    }
    mime.emplace_back(std::move(extension), type->get());
}

}  // namespace

bool same_socket(const SocketAddress& a, const SocketAddress& b) {
    return a.length == b.length && std::memcmp(&a.storage, &b.storage, a.length) == 0;
}

bool is_port_zero(const SocketAddress& address) {
    // sin_port and sin6_port sit at the same offset.
    return reinterpret_cast<const sockaddr_in&>(address.storage).sin_port == 0;
}

void read_server(const toml::node* node, LoadContext& context, ServerConfig& server) {
    if (!node) {
        context.diagnostics.error(SourcePosition{1, 1},
                                  "[server] is missing; it needs at least "
                                  "listen = [\"127.0.0.1:8080\"]");
        return;
    }
    const toml::table* table = expect_table(*node, "server", context);
    if (!table) {
        return;
    }
    TableReader reader(*table, "server.", "[server]", context.diagnostics);
    if (reader.require("listen", "listen = [\"127.0.0.1:8080\"]")) {
        read_listen(reader, "listen", context, server.listen);
    }
    read_workers(reader, server.workers);
    reader.read_bounded("max_connections", server.max_connections, 1u, UINT32_MAX);
    reader.read_duration("keepalive_timeout", server.keepalive_timeout);
    reader.read_bounded("keepalive_requests", server.keepalive_requests, 1u, UINT32_MAX);
    // A zero timeout would fire before the first byte could arrive.
    constexpr Duration positive{1};
    reader.read_duration("header_timeout", server.header_timeout, positive);
    reader.read_duration("body_timeout", server.body_timeout, positive);
    reader.read_duration("send_timeout", server.send_timeout, positive);
    // Below 1KiB a browser's ordinary cookies do not fit; above 1MiB a few
    // slow clients could pin a worker's memory.
    reader.read_size("max_header_bytes", server.max_header_bytes, 1024, 1024 * 1024);
    reader.read_size("max_body_bytes", server.max_body_bytes, 0, UINT64_MAX);
    reader.read_size("large_send_buffer", server.large_send_buffer, 0, 1024 * 1024 * 1024);
    // Zero is allowed: stop at once without draining.
    reader.read_duration("shutdown_timeout", server.shutdown_timeout);
    read_header_value(reader, "server_header", server.server_header);
    read_user(reader, server.user);
    WorkerScheduling scheduling{};
    if (reader.read_choice("worker_scheduling", scheduling,
                           {{"batch", WorkerScheduling::batch}, {"normal", WorkerScheduling::normal}}))
        server.worker_scheduling = scheduling;
    read_address_ranges(reader, "trusted_proxies", server.trusted_proxies);
    reader.finish();
}

void read_log(const toml::node& node, LoadContext& context, LogConfig& log) {
    const toml::table* table = expect_table(node, "log", context);
    if (!table) {
        return;
    }
    TableReader reader(*table, "log.", "[log]", context.diagnostics);
    reader.read_choice("level", log.level,
                       {{"trace", LogLevel::trace},
                        {"debug", LogLevel::debug},
                        {"info", LogLevel::info},
                        {"warn", LogLevel::warn},
                        {"error", LogLevel::error}});
    read_log_target(reader, "error", {"stderr"}, context, log.error);
    read_log_target(reader, "access", {"off", "stdout"}, context, log.access);
    reader.read_choice("access_format", log.access_format,
                       {{"combined", AccessFormat::combined}, {"json", AccessFormat::json}});
    reader.finish();
}

void read_metrics(const toml::node& node, LoadContext& context, const ServerConfig& server,
                  std::optional<MetricsConfig>& metrics) {
    const toml::table* table = expect_table(node, "metrics", context);
    if (!table) {
        return;
    }
    TableReader reader(*table, "metrics.", "[metrics]", context.diagnostics);
    MetricsConfig read;
    if (reader.require("listen", "listen = \"127.0.0.1:9145\"") &&
        reader.read_address("listen", read.listen, HostNames::refused)) {
        // With SO_REUSEPORT both binds would succeed and the kernel would
        // spread client requests onto the metrics listener.
        for (const SocketAddress& address : server.listen) {
            if (same_socket(address, read.listen) && !is_port_zero(address)) {
                reader.wrong("listen", "an address not also in server.listen");
            }
        }
        metrics = std::move(read);
    }
    reader.finish();
}

void read_mime(const toml::node& node, LoadContext& context,
               std::vector<std::pair<std::string, std::string>>& mime) {
    const toml::table* table = expect_table(node, "mime", context);
    if (!table) {
        return;
    }
    for (const auto& [key, value] : entries_in_file_order(*table)) {
        read_mime_entry(*key, *value, context, mime);
    }
}

}  // namespace portico::config
