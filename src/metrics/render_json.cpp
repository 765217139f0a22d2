// GET /stats: the snapshot as JSON, with percentiles worked out, for people
// and scripts comparing benchmark runs.
#include <array>
#include <cstdio>
#include <string>
#include <string_view>
#include <type_traits>

#include "metrics/render.hpp"

namespace portico::metrics {

namespace {

class JsonText {
public:
    // Members and elements: a comma before all but the first of each object.
    void open(char bracket) {
        separate();
        out_ += bracket;
        first_ = true;
    }
    void close(char bracket) {
        out_ += bracket;
        first_ = false;
    }
    void key(std::string_view name) {
        separate();
        string(name);
        out_ += ':';
        first_ = true;  // the value that follows takes no comma
    }
    void number(std::string_view digits) {
        separate();
        out_ += digits;
    }
    void number(uint64_t value) { number(std::to_string(value)); }
    void number(int64_t value) { number(std::to_string(value)); }
    void text(std::string_view value) {
        separate();
        string(value);
    }
    void boolean(bool value) { number(value ? "true" : "false"); }

    template <typename T>
    void field(std::string_view name, const T& value) {
        key(name);
        if constexpr (std::is_convertible_v<T, std::string_view>)
            text(value);
        else if constexpr (std::is_same_v<T, bool>)
            boolean(value);
        else
            number(value);
    }

    std::string take() { return std::move(out_); }

private:
    void separate() {
        if (!first_) out_ += ',';
        first_ = false;
    }
    void string(std::string_view value) {
        out_ += '"';
        for (char c : value) {
            if (c == '"' || c == '\\') {
                out_ += '\\';
                out_ += c;
            } else if (static_cast<unsigned char>(c) < 0x20) {
                char escaped[8];
                std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
                out_ += escaped;
            } else {
                out_ += c;
            }
        }
        out_ += '"';
    }

    std::string out_;
    bool first_ = true;
};

void histogram(JsonText& json, std::string_view name, const HistogramSnapshot& histogram) {
    json.key(name);
    json.open('{');
    json.field("count", histogram.count);
    json.key("sum");
    json.number(format_seconds(histogram.sum_ns));
    static constexpr std::array<std::pair<std::string_view, double>, 3> quantiles = {
        {{"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}}};
    for (const auto& [label, q] : quantiles) {
        json.key(label);
        json.number(format_seconds(histogram.percentile(q)));
    }
    json.key("max");
    json.number(format_seconds(histogram.max_ns));
    json.close('}');
}

void totals(JsonText& json, const Snapshot& snapshot) {
    std::array<uint64_t, 6> by_class{};  // other, 1xx..5xx
    uint64_t response_bytes = 0;
    uint64_t sendfile_bytes = 0;
    HistogramSnapshot request, upstream, overhead, connect;
    for (const LocationSnapshot& location : snapshot.locations) {
        for (size_t slot = 0; slot < status_slot_count; ++slot)
            by_class[status_class(slot)] += location.responses[slot];
        response_bytes += location.response_bytes;
        sendfile_bytes += location.sendfile_bytes;
        request.add(location.request_duration);
        upstream.add(location.upstream_duration);
        overhead.add(location.proxy_overhead);
    }
    for (const ServerSnapshot& server : snapshot.servers) connect.add(server.connect_time);

    json.key("totals");
    json.open('{');
    json.field("connections_accepted", snapshot.connections_accepted);
    json.field("connections_active", snapshot.connections_active);
    json.field("requests", request.count);
    json.key("responses");
    json.open('{');
    for (int status_class = 1; status_class <= 5; ++status_class)
        json.field(std::to_string(status_class) + "xx", by_class[status_class]);
    json.field("other", by_class[0]);
    json.close('}');
    json.field("response_bytes", response_bytes);
    json.field("sendfile_bytes", sendfile_bytes);
    json.field("upstream_retries", snapshot.upstream_retries);
    json.field("worker_restarts", snapshot.worker_restarts);
    json.key("config_reloads");
    json.open('{');
    json.field("ok", snapshot.config_reloads_ok);
    json.field("failed", snapshot.config_reloads_failed);
    json.close('}');
    histogram(json, "request_duration", request);
    histogram(json, "upstream_duration", upstream);
    histogram(json, "proxy_overhead", overhead);
    histogram(json, "upstream_connect", connect);
    json.close('}');
}

void workers(JsonText& json, const Snapshot& snapshot) {
    json.key("workers");
    json.open('[');
    for (const WorkerSnapshot& worker : snapshot.workers) {
        json.open('{');
        json.field("slot", uint64_t{worker.slot});
        json.field("worker", uint64_t{worker.worker});
        json.field("pid", int64_t{worker.pid});
        json.field("live", worker.live);
        json.field("connections_accepted", worker.connections_accepted);
        json.field("connections_active", worker.connections_active);
        json.field("requests", worker.requests);
        json.field("upstream_retries", worker.upstream_retries);
        json.close('}');
    }
    json.close(']');
}

void locations(JsonText& json, const Snapshot& snapshot) {
    json.key("locations");
    json.open('[');
    for (const LocationSnapshot& location : snapshot.locations) {
        json.open('{');
        json.field("name", location.name);
        json.field("requests", location.requests());
        json.key("codes");
        json.open('{');
        for (size_t slot = 0; slot < status_slot_count; ++slot)
            if (location.responses[slot] != 0)
                json.field(status_label(slot), location.responses[slot]);
        json.close('}');
        json.field("response_bytes", location.response_bytes);
        json.field("sendfile_bytes", location.sendfile_bytes);
        histogram(json, "request_duration", location.request_duration);
        histogram(json, "upstream_duration", location.upstream_duration);
        histogram(json, "proxy_overhead", location.proxy_overhead);
        json.close('}');
    }
    json.close(']');
}

void servers(JsonText& json, const Snapshot& snapshot) {
    json.key("upstream_servers");
    json.open('[');
    for (const ServerSnapshot& server : snapshot.servers) {
        json.open('{');
        json.field("upstream", server.upstream);
        json.field("server", server.server);
        json.field("requests", server.requests);
        json.field("connections_opened", server.connections_opened);
        json.field("connections_reused", server.connections_reused);
        json.field("connections_idle", server.connections_idle);
        json.key("errors");
        json.open('{');
        for (size_t kind = 0; kind < upstream_error_names.size(); ++kind)
            json.field(upstream_error_names[kind], server.errors[kind]);
        json.close('}');
        histogram(json, "connect_time", server.connect_time);
        json.close('}');
    }
    json.close(']');
}

}  // namespace

std::string render_json(const Snapshot& snapshot) {
    JsonText json;
    json.open('{');
    totals(json, snapshot);
    workers(json, snapshot);
    locations(json, snapshot);
    servers(json, snapshot);
    json.close('}');
    return json.take();
}

}  // namespace portico::metrics
