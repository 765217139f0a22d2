#include "cli/stats_command.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/units.hpp"
#include "core/unique_fd.hpp"

namespace portico::cli {

namespace {

using nlohmann::json;

// ---- reading the document -------------------------------------------------
// /stats may come from an older or newer portico: a missing or odd field
// reads as 0 (or null) instead of aborting the whole table.

const json& member(const json& object, const char* key) {
    static const json null;
    if (!object.is_object()) return null;
    auto found = object.find(key);
    return found == object.end() ? null : *found;
}

uint64_t count_of(const json& value) {
    if (value.is_number_unsigned()) return value.get<uint64_t>();
    if (value.is_number_integer())
        return static_cast<uint64_t>(std::max<int64_t>(0, value.get<int64_t>()));
    if (value.is_number_float()) return static_cast<uint64_t>(std::max(0.0, value.get<double>()));
    return 0;
}

uint64_t count_at(const json& object, const char* key) {
    return count_of(member(object, key));
}

double number_at(const json& object, const char* key) {
    const json& value = member(object, key);
    return value.is_number() ? value.get<double>() : 0.0;
}

std::string text_at(const json& object, const char* key) {
    const json& value = member(object, key);
    return value.is_string() ? value.get<std::string>() : std::string();
}

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

std::string printf_string(const char* format, double value) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, format, value);
    return buffer;
}

// Milliseconds with two or three significant decimals: 0.087, 4.56, 45.6, 456.
std::string milliseconds(double seconds) {
    double ms = seconds * 1000.0;
    if (ms < 1.0) return printf_string("%.3f", ms);
    if (ms < 10.0) return printf_string("%.2f", ms);
    if (ms < 100.0) return printf_string("%.1f", ms);
    return printf_string("%.0f", ms);
}

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
    double per_second = static_cast<double>(current - *previous) / interval_seconds;
    return printf_string(per_second < 100.0 ? "%.1f" : "%.0f", per_second);
}

// ---- tables ----------------------------------------------------------------

// Columns padded to their widest cell, two spaces apart: the leading name
// columns left-aligned, the numbers right-aligned so digits line up.
class Table {
public:
    explicit Table(size_t name_columns = 1) : name_columns_(name_columns) {}
    void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }

    std::string render() const {
        std::vector<size_t> widths;
        for (const auto& row : rows_) {
            widths.resize(std::max(widths.size(), row.size()), 0);
            for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
        }
        std::string out;
        for (const auto& row : rows_) {
            std::string line;
            for (size_t i = 0; i < row.size(); ++i) {
                if (i > 0) line += "  ";
                std::string padding(widths[i] - row[i].size(), ' ');
                line += i < name_columns_ ? row[i] + padding : padding + row[i];
            }
            line.erase(line.find_last_not_of(' ') + 1);
            out += line;
            out += '\n';
        }
        return out;
    }

private:
    size_t name_columns_;
    std::vector<std::vector<std::string>> rows_;
};

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

}  // namespace

std::string render_stats_table(const json& previous_or_null, const json& current,
                               double interval_seconds) {
    std::string out = summary_line(current);
    out += '\n';
    out += locations_table(previous_or_null, current, interval_seconds);
    out += "times in ms: rt request, urt upstream, ovh proxy overhead (rt - urt)\n";
    std::string servers = servers_table(previous_or_null, current, interval_seconds);
    if (!servers.empty()) {
        out += '\n';
        out += servers;
    }
    return out;
}

namespace {

// ---- fetching /stats -------------------------------------------------------

constexpr int timeout_ms = 2000;
constexpr const char* hint = " — is [metrics] listen set and portico running?";

// Set by SIGINT/SIGTERM; the handler is installed without SA_RESTART so a
// blocked connect, poll, recv or sleep returns at once with EINTR.
volatile sig_atomic_t stop_requested = 0;

void request_stop(int) {
    stop_requested = 1;
}

struct Url {
    std::string text;  // normalised, ending in the /stats path, for messages
    std::string host;  // as written, for the Host header
    sockaddr_storage address{};
    socklen_t length = 0;
    std::string path;
};

// http://HOST[:PORT][/PATH] with HOST an IPv4 literal, [IPv6] or localhost:
// the metrics listener is configured with an address, so no DNS is needed.
// PATH defaults to /stats, and /stats is added to one that lacks it.
std::optional<Url> parse_url(const std::string& text, std::string& error) {
    const std::string scheme = "http://";
    if (text.rfind(scheme, 0) != 0) {
        error = "--url '" + text +
                "': only http://HOST:PORT is supported (the metrics listener speaks plain HTTP)";
        return std::nullopt;
    }
    std::string rest = text.substr(scheme.size());
    size_t slash = rest.find('/');
    std::string authority = rest.substr(0, slash);
    std::string path = slash == std::string::npos ? "" : rest.substr(slash);
    while (!path.empty() && path.back() == '/') path.pop_back();
    if (path.size() < 6 || path.compare(path.size() - 6, 6, "/stats") != 0) path += "/stats";

    std::string host, port = "80";
    if (!authority.empty() && authority[0] == '[') {
        size_t close = authority.find(']');
        if (close == std::string::npos) {
            error = "--url '" + text + "': missing ']' after the IPv6 address";
            return std::nullopt;
        }
        host = authority.substr(1, close - 1);
        if (close + 1 < authority.size()) {
            if (authority[close + 1] != ':') {
                error = "--url '" + text + "': expected ':PORT' after ']'";
                return std::nullopt;
            }
            port = authority.substr(close + 2);
        }
    } else {
        size_t colon = authority.rfind(':');
        host = authority.substr(0, colon);
        if (colon != std::string::npos) port = authority.substr(colon + 1);
    }
    char* end = nullptr;
    unsigned long number = std::strtoul(port.c_str(), &end, 10);
    if (port.empty() || *end != '\0' || number == 0 || number > 65535) {
        error = "--url '" + text + "': port '" + port + "' is not a number 1..65535";
        return std::nullopt;
    }

    Url url;
    url.host = authority;
    url.path = path;
    url.text = scheme + authority + path;
    auto port_be = htons(static_cast<uint16_t>(number));
    std::string literal = host == "localhost" ? "127.0.0.1" : host;
    auto* v4 = reinterpret_cast<sockaddr_in*>(&url.address);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&url.address);
    if (inet_pton(AF_INET, literal.c_str(), &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = port_be;
        url.length = sizeof(sockaddr_in);
    } else if (inet_pton(AF_INET6, literal.c_str(), &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = port_be;
        url.length = sizeof(sockaddr_in6);
    } else {
        error = "--url '" + text + "': host '" + host +
                "' is not an IP address or localhost (use the [metrics] listen address)";
        return std::nullopt;
    }
    return url;
}

// Connects within timeout_ms: a non-blocking connect waited on with poll,
// since a blocking connect() to a dropped SYN would hang for minutes.
core::UniqueFd connect_to(const Url& url, std::string& error) {
    core::UniqueFd fd(
        ::socket(url.address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd) {
        error = std::string("socket: ") + std::strerror(errno);
        return {};
    }
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&url.address), url.length) != 0) {
        if (errno != EINPROGRESS) {
            error = "cannot reach " + url.text + ": " + std::strerror(errno) + hint;
            return {};
        }
        pollfd ready{.fd = fd.get(), .events = POLLOUT, .revents = 0};
        int polled = ::poll(&ready, 1, timeout_ms);
        if (polled <= 0) {
            error = "cannot reach " + url.text + ": " +
                    (polled == 0 ? std::string("no answer within 2 s") : std::strerror(errno)) +
                    hint;
            return {};
        }
        int failure = 0;
        socklen_t size = sizeof failure;
        ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &failure, &size);
        if (failure != 0) {
            error = "cannot reach " + url.text + ": " + std::strerror(failure) + hint;
            return {};
        }
    }
    // From here on a plain blocking socket, each send and recv bounded.
    ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
    timeval limit{.tv_sec = timeout_ms / 1000, .tv_usec = 0};
    ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    ::setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
    return fd;
}

// A chunked body, once all of it is there; nullopt while it is not (or if
// it is malformed, which then shows up at EOF as "incomplete").
std::optional<std::string> dechunk(std::string_view body) {
    std::string out;
    size_t at = 0;
    for (;;) {
        size_t line_end = body.find("\r\n", at);
        if (line_end == std::string_view::npos) return std::nullopt;
        std::string size_text(body.substr(at, line_end - at));
        char* end = nullptr;
        unsigned long size = std::strtoul(size_text.c_str(), &end, 16);
        if (end == size_text.c_str()) return std::nullopt;
        at = line_end + 2;
        if (size == 0) return out;  // trailers, if any, are of no interest
        if (body.size() < at + size + 2) return std::nullopt;
        out.append(body.substr(at, size));
        at += size + 2;
    }
}

struct Response {
    int status = 0;
    std::string reason;
    std::string body;
};

// Splits head and body; true once the body is complete (Content-Length,
// chunked, or EOF for neither).
bool parse_response(const std::string& raw, bool at_eof, Response& response) {
    size_t head_end = raw.find("\r\n\r\n");
    if (head_end == std::string::npos) return false;
    std::string head = raw.substr(0, head_end);
    std::string_view body = std::string_view(raw).substr(head_end + 4);
    // HTTP/1.1 200 OK
    if (head.size() < 12 || head.rfind("HTTP/1.", 0) != 0) return false;
    response.status = std::atoi(head.c_str() + 9);
    size_t line_end = head.find("\r\n");
    response.reason =
        head.size() > 13
            ? head.substr(13, line_end == std::string::npos ? std::string::npos : line_end - 13)
            : "";
    std::optional<size_t> content_length;
    bool chunked = false;
    for (size_t at = line_end; at != std::string::npos && at < head.size();) {
        size_t start = at + 2, end = head.find("\r\n", start);
        std::string line =
            head.substr(start, end == std::string::npos ? std::string::npos : end - start);
        std::string lower = line;
        std::transform(lower.begin(), lower.end(), lower.begin(),
                       [](unsigned char c) { return std::tolower(c); });
        if (lower.rfind("content-length:", 0) == 0)
            content_length = std::strtoull(line.c_str() + 15, nullptr, 10);
        else if (lower.rfind("transfer-encoding:", 0) == 0 &&
                 lower.find("chunked") != std::string::npos)
            chunked = true;
        at = end;
    }
    if (chunked) {
        std::optional<std::string> whole = dechunk(body);
        if (!whole) return false;
        response.body = std::move(*whole);
        return true;
    }
    if (content_length) {
        if (body.size() < *content_length) return false;
        response.body = std::string(body.substr(0, *content_length));
        return true;
    }
    if (!at_eof) return false;
    response.body = std::string(body);
    return true;
}

std::optional<std::string> fetch_stats(const Url& url, std::string& error) {
    core::UniqueFd fd = connect_to(url, error);
    if (!fd) return std::nullopt;
    std::string request = "GET " + url.path + " HTTP/1.1\r\nHost: " + url.host +
                          "\r\nAccept: application/json\r\nUser-Agent: portico-stats\r\n"
                          "Connection: close\r\n\r\n";
    for (size_t sent = 0; sent < request.size();) {
        ssize_t n = ::send(fd.get(), request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
        if (n < 0) {
            error = "cannot send to " + url.text + ": " +
                    (errno == EAGAIN ? std::string("timed out after 2 s") : std::strerror(errno));
            return std::nullopt;
        }
        sent += static_cast<size_t>(n);
    }
    std::string raw;
    Response response;
    for (;;) {
        char buffer[16384];
        ssize_t n = ::recv(fd.get(), buffer, sizeof buffer, 0);
        if (n < 0) {
            error = url.text + ": " +
                    (errno == EAGAIN ? std::string("no answer within 2 s") : std::strerror(errno));
            return std::nullopt;
        }
        raw.append(buffer, static_cast<size_t>(n));
        if (parse_response(raw, n == 0, response)) break;
        if (n == 0) {
            error = url.text + ": the connection closed before a whole HTTP response arrived" +
                    " — is that portico's [metrics] listen address?";
            return std::nullopt;
        }
    }
    if (response.status != 200) {
        error = url.text + " answered " + std::to_string(response.status) + " " + response.reason +
                " — is that portico's [metrics] listen address?";
        return std::nullopt;
    }
    return std::move(response.body);
}

std::optional<json> read_stats(const Url& url, std::string& error) {
    std::optional<std::string> body = fetch_stats(url, error);
    if (!body) return std::nullopt;
    json document = json::parse(*body, nullptr, false);
    if (document.is_discarded() || !document.is_object()) {
        error = url.text +
                " did not return a JSON object — is that portico's [metrics] listen address?";
        return std::nullopt;
    }
    return document;
}

// ---- the command -----------------------------------------------------------

constexpr const char* usage =
    "usage: portico stats [--url http://127.0.0.1:9145] [--watch 1s]\n"
    "  --url URL      the [metrics] listen address (default http://127.0.0.1:9145)\n"
    "  --watch TIME   redraw every TIME (1s, 500ms, 2) with req/s, until Ctrl-C\n";

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

int watch(const Url& url, double interval) {
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
        std::optional<json> current = read_stats(url, error);
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
        } else {
            std::fprintf(stderr, "portico stats: unknown argument '%s'\n%s", arg.c_str(), usage);
            return 2;
        }
    }
    std::string error;
    std::optional<Url> url = parse_url(url_text, error);
    if (!url) {
        std::fprintf(stderr, "portico stats: %s\n", error.c_str());
        return 2;
    }
    if (interval) return watch(*url, *interval);

    std::optional<json> current = read_stats(*url, error);
    if (!current) {
        std::fprintf(stderr, "portico stats: %s\n", error.c_str());
        return 1;
    }
    std::fputs(render_stats_table(json(), *current, 0.0).c_str(), stdout);
    return 0;
}

}  // namespace portico::cli
