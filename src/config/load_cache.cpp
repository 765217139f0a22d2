// [cache.NAME] zones and a location's `cache` table (nginx's
// proxy_cache_path and proxy_cache*; cache/ builds them).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>

#include "config/sections.hpp"

namespace portico::config {

namespace {

// The statuses `valid` may name: RFC 9111 4.2.2's heuristically cacheable
// ones, without 206 (the cache keeps whole objects and cuts ranges from
// them), with 302 and 307, which nginx's classic `proxy_cache_valid 200 302
// 10m` stores (RFC 9111 3: any final status with explicit freshness, which
// `valid` is).
constexpr int valid_statuses[] = {200, 203, 204, 300, 301, 302, 307, 308, 404, 405, 410, 414, 501};

// The disk tier's folder: created when missing, and writable (a -t error
// otherwise, as nginx's proxy_cache_path).
std::string unwritable_folder(const std::string& path) {
    std::error_code error;
    std::filesystem::create_directories(path, error);
    if (error) return error.message();
    if (::access(path.c_str(), W_OK | X_OK) != 0) return std::strerror(errno);
    return {};
}

void read_zone(const std::string& name, const toml::table& table, LoadContext& context,
               CacheZoneConfig& zone) {
    std::string label = "cache." + name;
    TableReader reader(table, label + ".", "[" + label + "]", context.diagnostics);
    zone.name = name;
    zone.where = position_of(table.source());
    if (reader.get("memory") == nullptr)
        context.diagnostics.error(table.source(),
                                  label +
                                      ".memory: missing (the shared memory's size, like "
                                      "\"256MiB\")");
    reader.read_size("memory", zone.memory, 256 * 1024, uint64_t{1} << 40);
    if (reader.read_string("path", zone.path)) {
        zone.path = resolve_path(context, zone.path);
        if (std::string why = unwritable_folder(zone.path); !why.empty())
            reader.report("path", *reader.get("path"),
                          "cannot be created or written (" + why + ")");
    }
    reader.read_size("max_size", zone.max_size, 1024 * 1024, uint64_t{1} << 50);
    if (reader.get("max_size") != nullptr && zone.path.empty())
        reader.report("max_size", *reader.get("max_size"), "applies only with a path");
    reader.finish();
}

// valid = { 200 = "10m", 404 = "1m", any = "1s" }
void read_valid(TableReader& reader, Diagnostics& diagnostics, LocationCacheConfig& cache) {
    const toml::node* node = reader.get("valid");
    if (node == nullptr) return;
    const toml::table* table = node->as_table();
    if (table == nullptr) {
        reader.wrong("valid", "a table of statuses and durations, like { 200 = \"10m\" }");
        return;
    }
    for (const auto& [key, value] : entries_in_file_order(*table)) {
        std::string_view text = key->str();
        int status = -1;
        if (text == "any") {
            status = 0;
        } else {
            auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), status);
            if (error != std::errc() || end != text.data() + text.size() ||
                std::find(std::begin(valid_statuses), std::end(valid_statuses), status) ==
                    std::end(valid_statuses)) {
                std::string accepted;
                for (int s : valid_statuses) accepted += std::to_string(s) + ", ";
                diagnostics.error(key->source(), reader.field("valid") + ": \"" +
                                                     std::string(text) +
                                                     "\" is not a status the cache can store "
                                                     "(one of " +
                                                     accepted + "or \"any\")");
                continue;
            }
        }
        const auto* duration_text = value->as_string();
        std::optional<Duration> duration =
            duration_text ? parse_duration(duration_text->get()) : std::nullopt;
        if (!duration || *duration < std::chrono::seconds(1)) {
            diagnostics.error(value->source(), reader.field("valid") + "." + std::string(text) +
                                                   ": expected a duration of at least 1s, like "
                                                   "\"10m\", got " +
                                                   describe(*value));
            continue;
        }
        cache.valid.emplace_back(status,
                                 std::chrono::duration_cast<std::chrono::seconds>(*duration));
    }
}

void read_seconds(TableReader& reader, std::string_view key, std::chrono::seconds& out) {
    Duration duration{0};
    if (reader.read_duration(key, duration))
        out = std::chrono::duration_cast<std::chrono::seconds>(duration);
}

}  // namespace

void read_cache_zones(const toml::node& node, LoadContext& context,
                      std::vector<CacheZoneConfig>& caches) {
    const toml::table* table = expect_table(node, "cache", context);
    if (!table) return;
    for (const auto& [key, value] : entries_in_file_order(*table)) {
        std::string name(key->str());
        const toml::table* zone_table = value->as_table();
        if (!zone_table) {
            context.diagnostics.error(key->source(), "cache." + name +
                                                         ": expected a table [cache." + name +
                                                         "] with memory, got " + describe(*value));
            continue;
        }
        read_zone(name, *zone_table, context, caches.emplace_back());
    }
}

void read_location_cache(TableReader& reader, const std::string& label, LoadContext& context,
                         LocationConfig& location) {
    const toml::node* node = reader.get("cache");
    if (node == nullptr) return;
    const toml::table* table = node->as_table();
    if (table == nullptr) {
        reader.wrong("cache", "a table like { zone = \"pages\", valid = { 200 = \"10m\" } }");
        return;
    }
    if (!reader.table().contains("proxy"))
        context.diagnostics.error(node->source(),
                                  label + ": cache applies only to a location with proxy");
    TableReader cache_reader(*table, label + ": cache.", label + "'s cache", context.diagnostics);
    LocationCacheConfig cache;
    bool ok = true;
    std::string zone;
    if (!cache_reader.read_string("zone", zone)) {
        if (cache_reader.get("zone") == nullptr)
            context.diagnostics.error(table->source(),
                                      label + ": cache.zone: missing (a [cache.NAME] name)");
        ok = false;
    } else {
        const std::vector<CacheZoneConfig>& zones = *context.caches;
        auto found = std::find_if(zones.begin(), zones.end(),
                                  [&](const CacheZoneConfig& z) { return z.name == zone; });
        if (found == zones.end()) {
            cache_reader.report("zone", *cache_reader.get("zone"),
                                "\"" + zone + "\" is not a [cache.NAME] table of this file");
            ok = false;
        }
        cache.zone = static_cast<size_t>(found - zones.begin());
    }
    read_valid(cache_reader, context.diagnostics, cache);
    if (const toml::node* key = cache_reader.get("key")) {
        ok = read_template(*key, cache_reader.field("key"),
                           location.match == MatchKind::regex ? capture_scope(location.pattern)
                                                              : CaptureScope{},
                           context.diagnostics, cache.key) &&
             ok;
    } else {
        TemplateError unused;
        compile_template("$scheme$host$request_uri", CaptureScope{}, cache.key, unused);
    }
    cache_reader.read_bool("lock", cache.lock);
    cache_reader.read_duration("lock_timeout", cache.lock_timeout, std::chrono::milliseconds(1));
    read_seconds(cache_reader, "stale_while_revalidate", cache.stale_while_revalidate);
    read_seconds(cache_reader, "stale_if_error", cache.stale_if_error);
    if (read_header_value(cache_reader, "status_header", cache.status_header) &&
        !is_token(cache.status_header)) {
        cache_reader.wrong("status_header", "a header name, like \"X-Cache-Status\"");
        cache.status_header.clear();
    }
    cache_reader.finish();
    if (ok) location.cache = std::move(cache);
}

}  // namespace portico::config
