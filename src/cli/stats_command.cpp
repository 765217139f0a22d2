#include "cli/stats_command.hpp"

#include <signal.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/compare_table.hpp"
#include "cli/metrics_client.hpp"
#include "cli/stats_json.hpp"
#include "cli/text_table.hpp"
#include "config/units.hpp"
#include "metrics/saved_snapshots.hpp"

namespace portico::cli {

namespace {

using nlohmann::json;

const json* find_by_name(const json& list, const char* key, const std::string& name,
                         const char* key2 = nullptr, const std::string& name2 = {}) {
    if (!list.is_array()) return nullptr;
    for (const json& item : list)
        if (text_at(item, key) == name && (key2 == nullptr || text_at(item, key2) == name2))
            return &item;
    return nullptr;
}

// A location's "codes" hold exact codes ("404") and, for codes without a
// counter of their own, classes ("4xx"); both add to the class. "other"
// (outside 100..599) has no column.
std::array<uint64_t, 6> status_classes(const json& codes) {
    std::array<uint64_t, 6> classes{};
    if (!codes.is_object()) return classes;
    for (const auto& [code, count] : codes.items())
        if (!code.empty() && code[0] >= '1' && code[0] <= '5')
            classes[static_cast<size_t>(code[0] - '0')] += count_of(count);
    return classes;
}

// ---- formatting numbers ----------------------------------------------------

// A histogram's percentile, "-" while it has no samples.
std::string percentile(const json& histogram, const char* which) {
    if (count_at(histogram, "count") == 0) return "-";
    return milliseconds(number_at(histogram, which));
}

std::string human_bytes(uint64_t bytes) {
    static constexpr const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
    if (bytes < 1024) return std::to_string(bytes) + " B";
    double value = static_cast<double>(bytes) / 1024.0;
    size_t unit = 0;
    while (value >= 1024.0 && unit + 1 < std::size(units)) {
        value /= 1024.0;
        ++unit;
    }
    return printf_string(value < 10.0    ? "%.2f"
                         : value < 100.0 ? "%.1f"
                                         : "%.0f",
                         value) +
           " " + units[unit];
}

std::string rate(std::optional<uint64_t> previous, uint64_t current, double interval_seconds) {
    if (!previous || current < *previous || !(interval_seconds > 0.0)) return "-";
    return per_second_text(static_cast<double>(current - *previous) / interval_seconds);
}

// ---- tables ----------------------------------------------------------------

// One row of the location table, for a location or for the totals.
std::vector<std::string> location_row(const std::string& name, uint64_t requests,
                                      const std::string& per_second,
                                      const std::array<uint64_t, 6>& classes, const json& numbers) {
    const json& request = member(numbers, "request_duration");
    const json& upstream = member(numbers, "upstream_duration");
    const json& overhead = member(numbers, "proxy_overhead");
    return {name,
            std::to_string(requests),
            per_second,
            std::to_string(classes[2]),
            std::to_string(classes[3]),
            std::to_string(classes[4]),
            std::to_string(classes[5]),
            percentile(request, "p50"),
            percentile(request, "p99"),
            percentile(upstream, "p50"),
            percentile(upstream, "p99"),
            percentile(overhead, "p50"),
            percentile(overhead, "p99"),
            human_bytes(count_at(numbers, "response_bytes"))};
}

std::string locations_table(const json& previous, const json& current, double interval) {
    Table table;
    table.add({"location", "requests", "req/s", "2xx", "3xx", "4xx", "5xx", "rt p50", "rt p99",
               "urt p50", "urt p99", "ovh p50", "ovh p99", "bytes"});
    const json& locations = member(current, "locations");
    if (locations.is_array()) {
        for (const json& location : locations) {
            std::string name = text_at(location, "name");
            uint64_t requests = count_at(location, "requests");
            std::optional<uint64_t> before;
            if (const json* old = find_by_name(member(previous, "locations"), "name", name))
                before = count_at(*old, "requests");
            table.add(location_row(name, requests, rate(before, requests, interval),
                                   status_classes(member(location, "codes")), location));
        }
    }
    const json& totals = member(current, "totals");
    std::optional<uint64_t> before;
    if (member(previous, "totals").is_object())
        before = count_at(member(previous, "totals"), "requests");
    const json& responses = member(totals, "responses");
    std::array<uint64_t, 6> classes{};
    for (size_t c = 1; c <= 5; ++c)
        classes[c] = count_at(responses, (std::to_string(c) + "xx").c_str());
    uint64_t requests = count_at(totals, "requests");
    table.add(location_row("total", requests, rate(before, requests, interval), classes, totals));
    return table.render();
}

std::string errors_text(const json& errors) {
    std::string detail;
    uint64_t sum = 0;
    if (errors.is_object()) {
        for (const auto& [kind, count] : errors.items()) {
            uint64_t n = count_of(count);
            if (n == 0) continue;
            sum += n;
            detail += (detail.empty() ? "" : ", ") + kind + " " + std::to_string(n);
        }
    }
    return sum == 0 ? "0" : std::to_string(sum) + " (" + detail + ")";
}

std::string servers_table(const json& previous, const json& current, double interval) {
    const json& servers = member(current, "upstream_servers");
    if (!servers.is_array() || servers.empty()) return {};
    Table table(2);
    table.add({"upstream", "server", "requests", "req/s", "opened", "reused", "reuse", "idle",
               "connect p50", "connect p99", "errors"});
    for (const json& server : servers) {
        std::string upstream = text_at(server, "upstream"), address = text_at(server, "server");
        uint64_t requests = count_at(server, "requests");
        uint64_t reused = count_at(server, "connections_reused");
        std::optional<uint64_t> before;
        if (const json* old = find_by_name(member(previous, "upstream_servers"), "upstream",
                                           upstream, "server", address))
            before = count_at(*old, "requests");
        const json& idle = member(server, "connections_idle");
        const json& connect = member(server, "connect_time");
        table.add({upstream, address, std::to_string(requests), rate(before, requests, interval),
                   std::to_string(count_at(server, "connections_opened")), std::to_string(reused),
                   requests == 0 ? "-"
                                 : printf_string("%.0f%%", 100.0 * static_cast<double>(reused) /
                                                               static_cast<double>(requests)),
                   idle.is_number_integer() ? std::to_string(idle.get<int64_t>()) : "0",
                   percentile(connect, "p50"), percentile(connect, "p99"),
                   errors_text(member(server, "errors"))});
    }
    return table.render();
}

// Each upstream's queue (requests waiting for a server below
// max_connections): waiting now, and answered 503 after connect_timeout.
std::string upstreams_table(const json& current) {
    const json& upstreams = member(current, "upstreams");
    if (!upstreams.is_array() || upstreams.empty()) return {};
    Table table;
    table.add({"upstream", "queued", "queue 503s"});
    for (const json& upstream : upstreams)
        table.add({text_at(upstream, "name"), std::to_string(count_at(upstream, "queued")),
                   std::to_string(count_at(upstream, "queue_timeouts"))});
    return table.render();
}

std::string summary_line(const json& current) {
    const json& totals = member(current, "totals");
    size_t live = 0;
    const json& workers = member(current, "workers");
    if (workers.is_array())
        for (const json& worker : workers)
            live += member(worker, "live").is_boolean() && member(worker, "live").get<bool>();
    std::string line = "connections " + std::to_string(count_at(totals, "connections_active")) +
                       " active, " + std::to_string(count_at(totals, "connections_accepted")) +
                       " accepted;  workers " + std::to_string(live) + " live;  upstream retries " +
                       std::to_string(count_at(totals, "upstream_retries")) +
                       ";  worker restarts " + std::to_string(count_at(totals, "worker_restarts"));
    return line + "\n";
}

// TLS handshakes since the start or the reset, and how long the completed
// ones took from the accept (zeros and "-" without [tls]).
std::string tls_line(const json& current) {
    const json& totals = member(current, "totals");
    const json& handshakes = member(totals, "tls_handshakes");
    const json& time = member(totals, "tls_handshake_time");
    return "tls handshakes " + std::to_string(count_at(handshakes, "full")) + " full, " +
           std::to_string(count_at(handshakes, "resumed")) + " resumed, " +
           std::to_string(count_at(handshakes, "failed")) + " failed;  handshake ms p50 " +
           percentile(time, "p50") + ", p99 " + percentile(time, "p99") + "\n";
}

}  // namespace

std::string render_stats_table(const json& previous_or_null, const json& current,
                               double interval_seconds) {
    std::string out = summary_line(current);
    out += tls_line(current);
    out += '\n';
    out += locations_table(previous_or_null, current, interval_seconds);
    out += "times in ms: rt request, urt upstream, ovh proxy overhead (rt - urt); "
           "location \"-\": requests answered without one\n";
    for (const std::string& table : {servers_table(previous_or_null, current, interval_seconds),
                                     upstreams_table(current)}) {
        if (table.empty()) continue;
        out += '\n';
        out += table;
    }
    return out;
}

namespace {

// Set by SIGINT/SIGTERM; the handler is installed without SA_RESTART so a
// blocked connect, poll, recv or sleep returns at once with EINTR.
volatile sig_atomic_t stop_requested = 0;

void request_stop(int) {
    stop_requested = 1;
}

// ---- the command -----------------------------------------------------------

constexpr const char* usage =
    "usage: portico stats [--url http://127.0.0.1:9145] [--watch 1s | --compare A B]\n"
    "  --url URL      the [metrics] listen address (default http://127.0.0.1:9145)\n"
    "  --watch TIME   redraw every TIME (1s, 500ms, 2) with req/s, until Ctrl-C\n"
    "  --compare A B  the snapshots A and B (POST /stats/snapshot?name=A) side by side\n";

// "1s", "500ms", "2m" as in the config, or a plain number of seconds ("0.5").
std::optional<double> parse_interval(const std::string& text) {
    if (auto duration = config::parse_duration(text)) return duration->count() / 1000.0;
    char* end = nullptr;
    double seconds = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !std::isfinite(seconds)) return std::nullopt;
    return seconds;
}

// Sleeps, returning early when a stop was requested.
void sleep_for(double seconds) {
    timespec left{.tv_sec = static_cast<time_t>(seconds),
                  .tv_nsec = static_cast<long>((seconds - std::floor(seconds)) * 1e9)};
    while (!stop_requested && ::nanosleep(&left, &left) != 0 && errno == EINTR) {
    }
}

std::string clock_text() {
    time_t now = std::time(nullptr);
    tm local{};
    localtime_r(&now, &local);
    char buffer[16];
    std::strftime(buffer, sizeof buffer, "%H:%M:%S", &local);
    return buffer;
}

int watch(const MetricsUrl& url, double interval) {
    struct sigaction action {};
    action.sa_handler = request_stop;
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0;  // no SA_RESTART: wake a blocked call at once
    ::sigaction(SIGINT, &action, nullptr);
    ::sigaction(SIGTERM, &action, nullptr);

    json previous;  // null until the first good read
    auto previous_time = std::chrono::steady_clock::now();
    while (!stop_requested) {
        std::string error;
        std::optional<json> current = read_json_object(url, error);
        auto now = std::chrono::steady_clock::now();
        if (stop_requested) break;             // the read was cut short by Ctrl-C: no error to show
        std::string screen = "\x1b[H\x1b[2J";  // home, clear: redraw in place
        screen += "portico stats  " + url.text + "  every " + printf_string("%g", interval) +
                  " s  " + clock_text() + "  (Ctrl-C to quit)\n\n";
        if (current) {
            // The measured time between the two reads, not the nominal
            // interval: a slow read or a late wake-up would skew req/s.
            double elapsed = std::chrono::duration<double>(now - previous_time).count();
            screen += render_stats_table(previous, *current, elapsed);
            previous = std::move(*current);
            previous_time = now;
        } else {
            // portico restarting, say: keep trying rather than quit.
            screen += error + "\n";
        }
        std::fputs(screen.c_str(), stdout);
        std::fflush(stdout);
        sleep_for(interval);
    }
    std::fputs("\n", stdout);
    return 0;
}

}  // namespace

int run_stats_command(int argc, char** argv) {
    std::string url_text = "http://127.0.0.1:9145";
    std::optional<double> interval;
    std::optional<std::pair<std::string, std::string>> compared;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        auto value_of = [&](const std::string& option) -> std::optional<std::string> {
            if (arg == option && i + 1 < argc) return std::string(argv[++i]);
            if (arg.rfind(option + "=", 0) == 0) return arg.substr(option.size() + 1);
            return std::nullopt;
        };
        if (arg == "-h" || arg == "--help") {
            std::fputs(usage, stdout);
            return 0;
        } else if (auto url = value_of("--url")) {
            url_text = *url;
        } else if (auto every = value_of("--watch")) {
            interval = parse_interval(*every);
            if (!interval || *interval < 0.1) {
                std::fprintf(
                    stderr,
                    "portico stats: --watch '%s' is not a time of 100ms or more (1s, 500ms, 2)\n",
                    every->c_str());
                return 2;
            }
        } else if (arg == "--compare" && i + 2 < argc) {
            compared.emplace(argv[i + 1], argv[i + 2]);
            i += 2;
            for (const std::string& name : {compared->first, compared->second}) {
                if (metrics::valid_snapshot_name(name)) continue;
                std::fprintf(stderr,
                             "portico stats: snapshot name '%s' is not 1 to 64 of A-Z a-z 0-9 . _ -\n",
                             name.c_str());
                return 2;
            }
        } else {
            std::fprintf(stderr, "portico stats: unknown argument '%s'\n%s", arg.c_str(), usage);
            return 2;
        }
    }
    if (interval && compared) {
        std::fprintf(stderr, "portico stats: --watch and --compare do not go together\n%s", usage);
        return 2;
    }
    std::string error;
    std::optional<MetricsUrl> url = parse_metrics_url(url_text, error);
    if (!url) {
        std::fprintf(stderr, "portico stats: %s\n", error.c_str());
        return 2;
    }
    if (interval) return watch(*url, *interval);

    // Names are checked above, so they need no percent-encoding.
    MetricsUrl target =
        compared ? url->at("/compare?a=" + compared->first + "&b=" + compared->second) : *url;
    std::optional<json> document = read_json_object(target, error);
    if (!document) {
        std::fprintf(stderr, "portico stats: %s\n", error.c_str());
        return 1;
    }
    std::string table =
        compared ? render_compare_table(*document) : render_stats_table(json(), *document, 0.0);
    std::fputs(table.c_str(), stdout);
    return 0;
}

}  // namespace portico::cli
