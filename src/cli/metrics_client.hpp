// The command line's side of the metrics listener: `--url` parsed (an
// address: the listener is configured with one, so no DNS), one GET per
// connection, every step bounded by 2 s, and the answer read as a JSON
// object, with errors worded for the operator.
#pragma once

#include <sys/socket.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace portico::cli {

struct MetricsUrl {
    std::string text;  // normalised, ending in the /stats path, for messages
    std::string host;  // as written, for the Host header
    sockaddr_storage address{};
    socklen_t length = 0;
    std::string path;

    // The same listener, the path extended: at("/compare?a=x&b=y").
    MetricsUrl at(std::string_view suffix) const;
};

// http://HOST[:PORT][/PATH] with HOST an IPv4 literal, [IPv6] or localhost.
// PATH defaults to /stats, and /stats is added to one that lacks it.
// nullopt and `error` (naming --url) when it is not such a URL.
std::optional<MetricsUrl> parse_metrics_url(const std::string& text, std::string& error);

// GETs `url`; the document when it answers 200 with a JSON object, else
// nullopt and `error`: unreachable, timed out, another status (with the
// first line portico said about it), or not JSON.
std::optional<nlohmann::json> read_json_object(const MetricsUrl& url, std::string& error);

}  // namespace portico::cli
