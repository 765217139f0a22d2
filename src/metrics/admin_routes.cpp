#include "metrics/admin_routes.hpp"

#include <uv.h>

#include <array>
#include <chrono>

#include "core/log.hpp"
#include "metrics/compare.hpp"
#include "metrics/dashboard/dashboard_files.hpp"
#include "metrics/render.hpp"

namespace portico::metrics {

namespace {

// The page loads its own files and reads /stats, nothing else: the browser
// enforces that, so a future edit that pulls in a CDN script fails loudly.
constexpr std::string_view dashboard_headers =
    "Content-Security-Policy: default-src 'none'; script-src 'self'; style-src 'self'; "
    "connect-src 'self'; img-src 'self'; form-action 'none'; frame-ancestors 'none'; "
    "base-uri 'none'\r\n"
    "X-Content-Type-Options: nosniff\r\n";

constexpr std::string_view name_rule = "1 to 64 of A-Z a-z 0-9 . _ -";

AdminResponse text(int status, std::string body) {
    return {.status = status, .content_type = "text/plain; charset=utf-8", .body = std::move(body)};
}

AdminResponse json(int status, std::string body) {
    return {.status = status, .content_type = "application/json", .body = std::move(body)};
}

// A name as the client sent it, shortened so a refusal never echoes a
// novel back.
std::string quoted(std::string_view name) {
    constexpr size_t shown = 80;
    return "'" + std::string(name.substr(0, shown)) + (name.size() > shown ? "...'" : "'");
}

// The snapshot name in `key`, or the 400 that says what is wrong with it.
std::optional<std::string_view> snapshot_name(const AdminRequest& request, std::string_view key,
                                              AdminResponse& refusal) {
    std::optional<std::string_view> name = query_value(request.query, key);
    if (!name) {
        refusal = text(400, "400 Bad Request: " + std::string(key) + "=NAME is required (" +
                                std::string(name_rule) + ")\n");
        return std::nullopt;
    }
    if (!valid_snapshot_name(*name)) {
        refusal = text(400, "400 Bad Request: snapshot name " + quoted(*name) + " is not " +
                                std::string(name_rule) + "\n");
        return std::nullopt;
    }
    return name;
}

std::string saved_names(const SavedSnapshots& snapshots) {
    std::string names;
    for (const SavedSnapshot& saved : snapshots.all())
        names += (names.empty() ? "" : ", ") + saved.name;
    return names.empty() ? "none" : names;
}

AdminResponse metrics_text(const AdminRequest&, AdminContext& context) {
    std::string body = render_prometheus(context.counters.snapshot());
    if (context.more_metrics) body += context.more_metrics();
    return {.content_type = "text/plain; version=0.0.4; charset=utf-8", .body = std::move(body)};
}

// A query value's percent-encoding undone ('+' stays '+': keys hold
// URLs); nullopt for a bad escape.
std::optional<std::string> percent_decoded(std::string_view value) {
    auto hex = [](char c) {
        return c >= '0' && c <= '9'   ? c - '0'
               : c >= 'a' && c <= 'f' ? c - 'a' + 10
               : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                      : -1;
    };
    std::string out;
    for (size_t i = 0; i < value.size(); ++i) {
        if (value[i] != '%') {
            out += value[i];
            continue;
        }
        if (i + 2 >= value.size()) return std::nullopt;
        int high = hex(value[i + 1]);
        int low = hex(value[i + 2]);
        if (high < 0 || low < 0) return std::nullopt;
        out += static_cast<char>(high * 16 + low);
        i += 2;
    }
    return out;
}

AdminResponse purge_cache(const AdminRequest& request, AdminContext& context) {
    if (!context.purge_cache) return text(404, "404 Not Found: no [cache.NAME] zone\n");
    std::optional<std::string_view> key = query_value(request.query, "key");
    std::optional<std::string_view> prefix = query_value(request.query, "prefix");
    if (!key == !prefix)
        return text(400,
                    "400 Bad Request: key=KEY or prefix=P is required (the expanded key, "
                    "percent-encoded)\n");
    std::optional<std::string> decoded = percent_decoded(key ? *key : *prefix);
    if (!decoded || decoded->empty())
        return text(400, "400 Bad Request: " + std::string(key ? "key" : "prefix") +
                             " is empty or badly percent-encoded\n");
    size_t purged = context.purge_cache(*decoded, !key);
    log::info("cache purge of {} '{}': {} objects", key ? "key" : "prefix", *decoded, purged);
    return json(200, "{\"purged\": " + std::to_string(purged) + "}");
}

AdminResponse stats(const AdminRequest&, AdminContext& context) {
    std::string body = render_json(context.counters.snapshot());
    if (std::string more = context.more_stats ? context.more_stats() : ""; !more.empty())
        body.insert(body.rfind('}'), "," + more);
    return json(200, std::move(body));
}

AdminResponse reset(const AdminRequest&, AdminContext& context) {
    context.counters.reset();
    context.snapshots.counters_reset(uv_hrtime());
    log::info("counters reset through the metrics listener");
    return {.status = 204};
}

AdminResponse save_snapshot(const AdminRequest& request, AdminContext& context) {
    AdminResponse refusal;
    std::optional<std::string_view> name = snapshot_name(request, "name", refusal);
    if (!name) return refusal;
    int64_t unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
    SavedSnapshots::Saved saved = context.snapshots.save(
        std::string(*name), context.counters.snapshot(), uv_hrtime(), unix_ms);
    if (saved.dropped)
        log::info("snapshot '{}' saved; the oldest, '{}', was dropped (at most {} are kept)", *name,
                  *saved.dropped, SavedSnapshots::capacity);
    else
        log::info("snapshot '{}' saved", *name);
    return json(201, render_snapshot_saved_json(saved));
}

AdminResponse list_snapshots(const AdminRequest&, AdminContext& context) {
    return json(200, render_snapshot_list_json(context.snapshots));
}

AdminResponse compare_snapshots(const AdminRequest& request, AdminContext& context) {
    AdminResponse refusal;
    std::optional<std::string_view> a = snapshot_name(request, "a", refusal);
    if (!a) return refusal;
    std::optional<std::string_view> b = snapshot_name(request, "b", refusal);
    if (!b) return refusal;
    const SavedSnapshot* first = context.snapshots.find(*a);
    const SavedSnapshot* second = context.snapshots.find(*b);
    if (!first || !second)
        return text(404, "404 Not Found: no snapshot named " + quoted(first ? *b : *a) +
                             " (saved: " + saved_names(context.snapshots) + ")\n");
    return json(200, render_compare_json(compare(*first, *second)));
}

AdminResponse health(const AdminRequest&, AdminContext& context) {
    bool ok = context.healthy();
    return text(ok ? 200 : 503, ok ? "ok\n" : "no worker is accepting\n");
}

struct Route {
    std::string_view path;
    std::string_view method;  // GET routes answer HEAD too
    AdminResponse (*answer)(const AdminRequest&, AdminContext&);
};

constexpr std::array<Route, 8> routes = {{
    {"/cache/purge", "POST", purge_cache},
    {"/metrics", "GET", metrics_text},
    {"/stats", "GET", stats},
    {"/stats/reset", "POST", reset},
    {"/stats/snapshot", "POST", save_snapshot},
    {"/stats/snapshots", "GET", list_snapshots},
    {"/stats/compare", "GET", compare_snapshots},
    {"/healthz", "GET", health},
}};

bool allows(std::string_view route_method, std::string_view method) {
    return method == route_method || (route_method == "GET" && method == "HEAD");
}

AdminResponse not_allowed(std::string_view allowed) {
    AdminResponse response = text(405, "405 Method Not Allowed\n");
    response.headers = "Allow: " + std::string(allowed) + "\r\n";
    return response;
}

}  // namespace

std::optional<std::string_view> query_value(std::string_view query, std::string_view key) {
    while (!query.empty()) {
        std::string_view pair = query.substr(0, query.find('&'));
        query.remove_prefix(std::min(query.size(), pair.size() + 1));
        size_t equals = pair.find('=');
        if (pair.substr(0, equals) == key)
            return equals == std::string_view::npos ? std::string_view() : pair.substr(equals + 1);
    }
    return std::nullopt;
}

AdminResponse answer_admin_request(const AdminRequest& request, AdminContext& context) {
    for (const Route& route : routes) {
        if (route.path != request.path) continue;
        if (!allows(route.method, request.method))
            return not_allowed(route.method == "GET" ? "GET, HEAD" : route.method);
        return route.answer(request, context);
    }
    if (const DashboardFile* file = find_dashboard_file(request.path)) {
        if (!allows("GET", request.method)) return not_allowed("GET, HEAD");
        return {.content_type = std::string(dashboard_content_type(file->name)),
                .body = std::string(file->body),
                .headers = std::string(dashboard_headers)};
    }
    return text(404,
                "404 Not Found: try / (the dashboard), /metrics, /stats, /stats/snapshots, "
                "/healthz\n");
}

}  // namespace portico::metrics
