// Prometheus text format, and the number formatting both renderers share.
#include "metrics/render.hpp"

#include <cstdio>
#include <string_view>

namespace portico::metrics {

std::string format_seconds(uint64_t ns) {
    std::string text = std::to_string(ns / 1'000'000'000);
    uint64_t fraction = ns % 1'000'000'000;
    if (fraction == 0) return text;
    char digits[16];
    std::snprintf(digits, sizeof digits, ".%09llu", static_cast<unsigned long long>(fraction));
    std::string_view decimals(digits);
    text += decimals.substr(0, decimals.find_last_not_of('0') + 1);
    return text;
}

std::string escape_label_value(std::string_view value) {
    std::string escaped;
    escaped.reserve(value.size());
    for (char c : value) {
        switch (c) {
        case '\\':
            escaped += "\\\\";
            break;
        case '"':
            escaped += "\\\"";
            break;
        case '\n':
            escaped += "\\n";
            break;
        default:
            escaped += c;
        }
    }
    return escaped;
}

namespace {

// `name="value"` pairs joined with commas, values escaped.
std::string labels(std::initializer_list<std::pair<std::string_view, std::string_view>> pairs) {
    std::string text;
    for (const auto& [name, value] : pairs) {
        if (!text.empty()) text += ',';
        text.append(name).append("=\"").append(escape_label_value(value)).append("\"");
    }
    return text;
}

class PrometheusText {
public:
    void family(std::string_view name, std::string_view type, std::string_view help) {
        out_.append("# HELP ").append(name).append(" ").append(help).append("\n");
        out_.append("# TYPE ").append(name).append(" ").append(type).append("\n");
    }

    void sample(std::string_view name, std::string_view labels, std::string_view value) {
        out_.append(name);
        if (!labels.empty()) out_.append("{").append(labels).append("}");
        out_.append(" ").append(value).append("\n");
    }
    void sample(std::string_view name, std::string_view labels, uint64_t value) {
        sample(name, labels, std::to_string(value));
    }
    void sample(std::string_view name, std::string_view labels, int64_t value) {
        sample(name, labels, std::to_string(value));
    }

    // Prometheus buckets are cumulative: `le` counts everything at or below
    // it, and +Inf equals _count.
    void histogram(std::string_view name, const std::string& labels,
                   const HistogramSnapshot& histogram) {
        std::string bucket = std::string(name) + "_bucket";
        std::string prefix = labels.empty() ? "le=\"" : labels + ",le=\"";
        uint64_t cumulative = 0;
        for (size_t i = 0; i < bucket_count; ++i) {
            cumulative += histogram.buckets[i];
            std::string le =
                i < bucket_bounds_ns.size() ? format_seconds(bucket_bounds_ns[i]) : "+Inf";
            sample(bucket, prefix + le + "\"", cumulative);
        }
        sample(std::string(name) + "_sum", labels, format_seconds(histogram.sum_ns));
        sample(std::string(name) + "_count", labels, histogram.count);
    }

    std::string take() { return std::move(out_); }

private:
    std::string out_;
};

// Always present, zero without [tls], so dashboards and alerts need not
// know whether TLS is configured.
void render_tls(PrometheusText& text, const Snapshot& snapshot) {
    text.family("portico_tls_handshakes_total", "counter",
                "TLS handshakes, by result: full (a new session), resumed (a session ticket) or "
                "failed.");
    for (size_t result = 0; result < tls_handshake_names.size(); ++result)
        text.sample("portico_tls_handshakes_total",
                    labels({{"result", tls_handshake_names[result]}}),
                    snapshot.tls_handshakes[result]);
    text.family("portico_tls_handshake_seconds", "histogram",
                "Connection accepted to TLS handshake done, full and resumed handshakes.");
    text.histogram("portico_tls_handshake_seconds", "", snapshot.tls_handshake_time);
}

// Always present, zero without proxy_protocol listeners, like the TLS families.
void render_proxy_protocol(PrometheusText& text, const Snapshot& snapshot) {
    text.family("portico_proxy_protocol_errors_total", "counter",
                "Connections to proxy_protocol listeners closed without a valid PROXY header, by "
                "reason: invalid (not a header), timeout (none within header_timeout) or "
                "truncated (the client closed inside it).");
    for (size_t reason = 0; reason < proxy_protocol_error_names.size(); ++reason)
        text.sample("portico_proxy_protocol_errors_total",
                    labels({{"reason", proxy_protocol_error_names[reason]}}),
                    snapshot.proxy_protocol_errors[reason]);
}

// Always present, zero without HTTP/2 clients, like the TLS families.
void render_http2(PrometheusText& text, const Snapshot& snapshot) {
    text.family("portico_http2_sessions_total", "counter",
                "Client connections that spoke HTTP/2 (h2 by ALPN, or h2c with prior knowledge).");
    text.sample("portico_http2_sessions_total", "", snapshot.http2.sessions);
    text.family("portico_http2_streams_total", "counter",
                "HTTP/2 streams the clients opened (each is a request, also counted in "
                "portico_requests_total).");
    text.sample("portico_http2_streams_total", "", snapshot.http2.streams);
    text.family("portico_http2_resets_total", "counter",
                "HTTP/2 streams ended by RST_STREAM, by the side that sent it.");
    for (size_t side = 0; side < reset_side_names.size(); ++side)
        text.sample("portico_http2_resets_total", labels({{"side", reset_side_names[side]}}),
                    snapshot.http2.resets[side]);
    text.family("portico_http2_goaways_sent_total", "counter",
                "GOAWAY frames sent: drains, idle timeouts, protocol errors and floods.");
    text.sample("portico_http2_goaways_sent_total", "", snapshot.http2.goaways_sent);
}

// Always present, zero without a compress location, like the TLS families.
void render_compression(PrometheusText& text, const Snapshot& snapshot) {
    struct Family {
        const char* name;
        const char* help;
        uint64_t CompressionSnapshot::*value;
    };
    const Family families[] = {
        {"portico_compressed_responses_total",
         "Responses compressed on the fly (not precompressed sidecars), by coding.",
         &CompressionSnapshot::responses},
        {"portico_compressed_cache_hits_total",
         "Of those, responses whose compressed body came from the worker's compressed cache "
         "(a static file compressed before), by coding.",
         &CompressionSnapshot::cache_hits},
        {"portico_compression_in_bytes_total",
         "Body bytes of the responses compressed on the fly, before compression, by coding.",
         &CompressionSnapshot::bytes_in},
        {"portico_compression_out_bytes_total",
         "Body bytes of the responses compressed on the fly, after compression, by coding.",
         &CompressionSnapshot::bytes_out},
    };
    for (const Family& family : families) {
        text.family(family.name, "counter", family.help);
        for (config::Coding coding : config::codings_by_preference)
            text.sample(family.name, labels({{"coding", config::coding_name(coding)}}),
                        snapshot.compression[static_cast<size_t>(coding)].*family.value);
    }
}

void render_locations(PrometheusText& text, const Snapshot& snapshot) {
    text.family("portico_requests_total", "counter",
                "Requests answered, by location (\"-\": none) and status.");
    for (const LocationSnapshot& location : snapshot.locations)
        for (size_t slot = 0; slot < status_slot_count; ++slot)
            if (location.responses[slot] != 0)
                text.sample("portico_requests_total",
                            labels({{"location", location.name}, {"code", status_label(slot)}}),
                            location.responses[slot]);

    struct HistogramFamily {
        const char* name;
        const char* help;
        HistogramSnapshot LocationSnapshot::*member;
    };
    static constexpr HistogramFamily histograms[] = {
        {"portico_request_duration_seconds", "First request byte to last response byte.",
         &LocationSnapshot::request_duration},
        {"portico_upstream_duration_seconds", "Request sent upstream to last upstream byte.",
         &LocationSnapshot::upstream_duration},
        {"portico_proxy_overhead_seconds",
         "Request duration minus upstream duration, for proxied requests.",
         &LocationSnapshot::proxy_overhead},
    };
    for (const HistogramFamily& family : histograms) {
        text.family(family.name, "histogram", family.help);
        for (const LocationSnapshot& location : snapshot.locations)
            text.histogram(family.name, labels({{"location", location.name}}),
                           location.*family.member);
    }

    text.family("portico_response_bytes_total", "counter", "Bytes written to clients.");
    for (const LocationSnapshot& location : snapshot.locations)
        text.sample("portico_response_bytes_total", labels({{"location", location.name}}),
                    location.response_bytes);
    text.family("portico_sendfile_bytes_total", "counter", "Response bytes sent with sendfile.");
    for (const LocationSnapshot& location : snapshot.locations)
        text.sample("portico_sendfile_bytes_total", labels({{"location", location.name}}),
                    location.sendfile_bytes);
}

void render_servers(PrometheusText& text, const Snapshot& snapshot) {
    struct CounterFamily {
        const char* name;
        const char* help;
        uint64_t ServerSnapshot::*member;
    };
    static constexpr CounterFamily counters[] = {
        {"portico_upstream_requests_total", "Requests sent to an upstream server.",
         &ServerSnapshot::requests},
        {"portico_upstream_connections_opened_total", "Upstream connections established.",
         &ServerSnapshot::connections_opened},
        {"portico_upstream_connections_reused_total",
         "Requests sent on a pooled keep-alive connection.", &ServerSnapshot::connections_reused},
    };
    for (const CounterFamily& family : counters) {
        text.family(family.name, "counter", family.help);
        for (const ServerSnapshot& server : snapshot.servers)
            text.sample(family.name,
                        labels({{"upstream", server.upstream}, {"server", server.server}}),
                        server.*family.member);
    }
    text.family("portico_upstream_connections_idle", "gauge",
                "Upstream connections idle in the pools now.");
    for (const ServerSnapshot& server : snapshot.servers)
        text.sample("portico_upstream_connections_idle",
                    labels({{"upstream", server.upstream}, {"server", server.server}}),
                    server.connections_idle);
    text.family("portico_upstream_errors_total", "counter", "Upstream failures, by kind.");
    for (const ServerSnapshot& server : snapshot.servers)
        for (size_t kind = 0; kind < upstream_error_names.size(); ++kind)
            text.sample("portico_upstream_errors_total",
                        labels({{"upstream", server.upstream},
                                {"server", server.server},
                                {"kind", upstream_error_names[kind]}}),
                        server.errors[kind]);
    text.family("portico_upstream_connect_seconds", "histogram",
                "Time to establish an upstream connection.");
    for (const ServerSnapshot& server : snapshot.servers)
        text.histogram("portico_upstream_connect_seconds",
                       labels({{"upstream", server.upstream}, {"server", server.server}}),
                       server.connect_time);
}

// Every limit a location lists, zero until it refuses (an alert on a rise
// needs the series before it); access denials once there are some, like
// portico_requests_total's codes.
void render_refusals(PrometheusText& text, const Snapshot& snapshot) {
    text.family("portico_limited_total", "counter",
                "Requests refused by a limit, by location and limit (a [limit.NAME]'s name, or "
                "max_concurrent).");
    for (const LimitSnapshot& limit : snapshot.limits)
        text.sample("portico_limited_total",
                    labels({{"location", limit.location}, {"limit", limit.limit}}), limit.refused);
    text.family("portico_access_denied_total", "counter",
                "Requests refused access, by location and reason: address (allow/deny, 403) or "
                "auth (Basic auth, 401).");
    for (const LocationSnapshot& location : snapshot.locations)
        for (size_t reason = 0; reason < access_denial_names.size(); ++reason)
            if (location.access_denied[reason] != 0)
                text.sample(
                    "portico_access_denied_total",
                    labels({{"location", location.name}, {"reason", access_denial_names[reason]}}),
                    location.access_denied[reason]);
    text.family("portico_cache_requests_total", "counter",
                "Requests to a location with a response cache, by location and result (hit, "
                "miss, expired, stale, updating, bypass).");
    for (const LocationSnapshot& location : snapshot.locations)
        for (size_t result = 0; result < cache_result_names.size(); ++result)
            if (location.cache[result] != 0)
                text.sample(
                    "portico_cache_requests_total",
                    labels({{"location", location.name}, {"result", cache_result_names[result]}}),
                    location.cache[result]);
}

void render_upstream_queues(PrometheusText& text, const Snapshot& snapshot) {
    text.family("portico_upstream_queued", "gauge",
                "Requests waiting now for a server below max_connections.");
    for (const UpstreamSnapshot& upstream : snapshot.upstreams)
        text.sample("portico_upstream_queued", labels({{"upstream", upstream.name}}),
                    upstream.queued);
    text.family("portico_upstream_queue_timeouts_total", "counter",
                "Requests answered 503 after waiting connect_timeout in the queue.");
    for (const UpstreamSnapshot& upstream : snapshot.upstreams)
        text.sample("portico_upstream_queue_timeouts_total", labels({{"upstream", upstream.name}}),
                    upstream.queue_timeouts);
}

}  // namespace

std::string render_prometheus(const Snapshot& snapshot) {
    PrometheusText text;
    text.family("portico_connections_accepted_total", "counter", "Client connections accepted.");
    text.sample("portico_connections_accepted_total", "", snapshot.connections_accepted);
    text.family("portico_connections_active", "gauge", "Client connections open now.");
    text.sample("portico_connections_active", "", snapshot.connections_active);
    render_tls(text, snapshot);
    render_http2(text, snapshot);
    render_proxy_protocol(text, snapshot);
    render_compression(text, snapshot);
    render_locations(text, snapshot);
    render_refusals(text, snapshot);
    render_servers(text, snapshot);
    render_upstream_queues(text, snapshot);
    text.family("portico_upstream_retries_total", "counter",
                "Requests retried on a fresh connection after a reused one failed.");
    text.sample("portico_upstream_retries_total", "", snapshot.upstream_retries);
    text.family("portico_worker_restarts_total", "counter", "Workers restarted after dying.");
    text.sample("portico_worker_restarts_total", "", snapshot.worker_restarts);
    text.family("portico_config_reloads_total", "counter", "Configuration reloads, by result.");
    text.sample("portico_config_reloads_total", labels({{"result", "ok"}}),
                snapshot.config_reloads_ok);
    text.sample("portico_config_reloads_total", labels({{"result", "failed"}}),
                snapshot.config_reloads_failed);
    return text.take();
}

}  // namespace portico::metrics
