// GET /stats: the snapshot as JSON, with percentiles worked out, for people
// and scripts comparing benchmark runs.
#include <array>
#include <string>
#include <string_view>

#include "metrics/json_text.hpp"
#include "metrics/render.hpp"

namespace portico::metrics {

namespace {

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
    // Per bucket (not cumulative), matching the document's bucket_bounds
    // plus the one above them: the dashboard takes differences between two
    // reads for the percentiles of the last second.
    json.key("buckets");
    json.open('[');
    for (uint64_t n : histogram.buckets) json.number(n);
    json.close(']');
    json.close('}');
}

void bucket_bounds(JsonText& json) {
    json.key("bucket_bounds");
    json.open('[');
    for (uint64_t bound : bucket_bounds_ns) json.number(format_seconds(bound));
    json.close(']');
}

// {"full": N, "resumed": N, "failed": N}
void tls_handshakes(JsonText& json,
                    const std::array<uint64_t, tls_handshake_names.size()>& handshakes) {
    json.key("tls_handshakes");
    json.open('{');
    for (size_t result = 0; result < tls_handshake_names.size(); ++result)
        json.field(tls_handshake_names[result], handshakes[result]);
    json.close('}');
}

// {"br": {"responses": N, "cache_hits": N, "bytes_in": N, "bytes_out": N}, "zstd": ..., "gzip": ...}
void compression(JsonText& json, const Snapshot& snapshot) {
    json.key("compression");
    json.open('{');
    for (config::Coding coding : config::codings_by_preference) {
        const CompressionSnapshot& counts = snapshot.compression[static_cast<size_t>(coding)];
        json.key(config::coding_name(coding));
        json.open('{');
        json.field("responses", counts.responses);
        json.field("cache_hits", counts.cache_hits);
        json.field("bytes_in", counts.bytes_in);
        json.field("bytes_out", counts.bytes_out);
        json.close('}');
    }
    json.close('}');
}

void totals(JsonText& json, const Snapshot& snapshot) {
    LocationSnapshot all = all_locations(snapshot);
    std::array<uint64_t, 6> by_class{};  // other, 1xx..5xx
    for (size_t slot = 0; slot < status_slot_count; ++slot)
        by_class[status_class(slot)] += all.responses[slot];
    HistogramSnapshot connect;
    for (const ServerSnapshot& server : snapshot.servers) connect.add(server.connect_time);

    json.key("totals");
    json.open('{');
    json.field("connections_accepted", snapshot.connections_accepted);
    json.field("connections_active", snapshot.connections_active);
    json.field("requests", all.request_duration.count);
    json.key("responses");
    json.open('{');
    for (int status_class = 1; status_class <= 5; ++status_class)
        json.field(std::to_string(status_class) + "xx", by_class[status_class]);
    json.field("other", by_class[0]);
    json.close('}');
    json.field("response_bytes", all.response_bytes);
    json.field("sendfile_bytes", all.sendfile_bytes);
    json.field("upstream_retries", snapshot.upstream_retries);
    tls_handshakes(json, snapshot.tls_handshakes);
    compression(json, snapshot);
    json.key("http2");
    json.open('{');
    json.field("sessions", snapshot.http2.sessions);
    json.field("streams", snapshot.http2.streams);
    json.key("resets");
    json.open('{');
    for (size_t side = 0; side < reset_side_names.size(); ++side)
        json.field(reset_side_names[side], snapshot.http2.resets[side]);
    json.close('}');
    json.field("goaways_sent", snapshot.http2.goaways_sent);
    json.close('}');
    json.key("proxy_protocol_errors");
    json.open('{');
    for (size_t reason = 0; reason < proxy_protocol_error_names.size(); ++reason)
        json.field(proxy_protocol_error_names[reason], snapshot.proxy_protocol_errors[reason]);
    json.close('}');
    json.field("worker_restarts", snapshot.worker_restarts);
    json.key("config_reloads");
    json.open('{');
    json.field("ok", snapshot.config_reloads_ok);
    json.field("failed", snapshot.config_reloads_failed);
    json.close('}');
    histogram(json, "request_duration", all.request_duration);
    histogram(json, "upstream_duration", all.upstream_duration);
    histogram(json, "proxy_overhead", all.proxy_overhead);
    histogram(json, "upstream_connect", connect);
    histogram(json, "tls_handshake_time", snapshot.tls_handshake_time);
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
        tls_handshakes(json, worker.tls_handshakes);
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
        json.key("access_denied");
        json.open('{');
        for (size_t reason = 0; reason < access_denial_names.size(); ++reason)
            json.field(access_denial_names[reason], location.access_denied[reason]);
        json.close('}');
        json.key("cache");
        json.open('{');
        for (size_t result = 0; result < cache_result_names.size(); ++result)
            json.field(cache_result_names[result], location.cache[result]);
        json.close('}');
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

void upstreams(JsonText& json, const Snapshot& snapshot) {
    json.key("upstreams");
    json.open('[');
    for (const UpstreamSnapshot& upstream : snapshot.upstreams) {
        json.open('{');
        json.field("name", upstream.name);
        json.field("queued", upstream.queued);
        json.field("queue_timeouts", upstream.queue_timeouts);
        json.close('}');
    }
    json.close(']');
}

void limits(JsonText& json, const Snapshot& snapshot) {
    json.key("limits");
    json.open('[');
    for (const LimitSnapshot& limit : snapshot.limits) {
        json.open('{');
        json.field("location", limit.location);
        json.field("limit", limit.limit);
        json.field("refused", limit.refused);
        json.close('}');
    }
    json.close(']');
}

}  // namespace

std::string render_json(const Snapshot& snapshot) {
    JsonText json;
    json.open('{');
    bucket_bounds(json);
    totals(json, snapshot);
    workers(json, snapshot);
    locations(json, snapshot);
    servers(json, snapshot);
    upstreams(json, snapshot);
    limits(json, snapshot);
    json.close('}');
    return json.take();
}

}  // namespace portico::metrics
