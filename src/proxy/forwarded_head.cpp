#include "proxy/forwarded_head.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include "http/header_text.hpp"
#include "http/path_encoding.hpp"
#include "http/status.hpp"

namespace portico::proxy {

namespace {

using http::equals_ignore_case;

// RFC 9110 7.6.1, plus Proxy-Connection (legacy) and Transfer-Encoding's
// sibling Content-Length on the response side, which the exchange frames.
constexpr std::string_view hop_by_hop[] = {"connection", "keep-alive", "proxy-connection", "te",
                                           "trailer", "upgrade"};

bool is_hop_by_hop(std::string_view name) {
    for (std::string_view hop : hop_by_hop)
        if (equals_ignore_case(name, hop)) return true;
    return false;
}

// Headers the sender listed in Connection are hop-by-hop too.
bool named_in_connection(std::string_view name, std::string_view connection) {
    bool named = false;
    http::for_each_list_member(connection, [&](std::string_view token) {
        if (equals_ignore_case(token, name)) named = true;
    });
    return named;
}

// hide_headers, lowercase.
bool is_hidden(std::string_view name, const std::vector<std::string>& hidden) {
    for (const std::string& hide : hidden)
        if (equals_ignore_case(name, hide)) return true;
    return false;
}

// A part of the object, or none if unchanged: what a cache fill leaves out.
bool asks_for_part(std::string_view name) {
    return equals_ignore_case(name, "range") || equals_ignore_case(name, "if-range") ||
           equals_ignore_case(name, "if-none-match") ||
           equals_ignore_case(name, "if-modified-since") || equals_ignore_case(name, "if-match") ||
           equals_ignore_case(name, "if-unmodified-since");
}

}  // namespace

bool is_websocket_request(const http::Request& request, const config::LocationConfig& location) {
    return location.websocket && request.upgrade &&
           equals_ignore_case(request.header("upgrade"), "websocket");
}

void write_upstream_request_head(http::ResponseHead& head, const http::Request& request,
                                 const http::PeerAddress& client, UpstreamRequestRules& rules,
                                 std::string_view server_host, bool websocket, bool keep_alive) {
    using Rules = UpstreamRequestRules;
    bool whole_object = request.upstream_whole_object;
    head.append(whole_object ? std::string_view("GET") : request.method_name);
    head.append(" ");
    rules.write_target(head, request);
    head.append(" HTTP/1.1\r\n");
    if (!rules.replaces(Rules::host))
        head.header("Host", rules.location().preserve_host && !request.host.empty() ? request.host
                                                                                    : server_host);

    std::string_view connection = request.header("connection");
    bool has_forwarded_for = false;
    bool has_rules = rules.has_headers();
    for (const http::HeaderField& field : request.headers) {
        std::string_view name = field.name;
        if (is_hop_by_hop(name) || named_in_connection(name, connection) ||
            equals_ignore_case(name, "host") || equals_ignore_case(name, "x-real-ip") ||
            equals_ignore_case(name, "x-forwarded-proto") ||
            equals_ignore_case(name, "x-forwarded-host") ||
            // Ours; a trusted proxy's is request.request_id already.
            equals_ignore_case(name, "x-request-id") ||
            // The client got its 100 from us; the body streams anyway.
            equals_ignore_case(name, "expect") ||
            // The body's framing is ours to write (below).
            equals_ignore_case(name, "content-length") ||
            equals_ignore_case(name, "transfer-encoding") || (has_rules && rules.sets(name)) ||
            (whole_object && asks_for_part(name)))
            continue;
        if (equals_ignore_case(name, "x-forwarded-for")) {
            has_forwarded_for = true;
            continue;
        }
        head.header(name, field.value);
    }
    char ip_buffer[INET6_ADDRSTRLEN];
    std::string_view ip = http::format_ip(client, ip_buffer, sizeof ip_buffer);
    if (!rules.replaces(Rules::forwarded_for)) {
        head.append("X-Forwarded-For: ");
        // Several X-Forwarded-For lines are one list (RFC 9110 5.3), in order.
        if (has_forwarded_for)
            for (const http::HeaderField& field : request.headers)
                if (equals_ignore_case(field.name, "x-forwarded-for") && !field.value.empty()) {
                    head.append(field.value);
                    head.append(", ");
                }
        head.append(ip);
        head.append("\r\n");
    }
    if (!rules.replaces(Rules::real_ip)) head.header("X-Real-IP", ip);
    if (!rules.replaces(Rules::forwarded_proto))
        head.header("X-Forwarded-Proto", request.secure ? "https" : "http");
    if (!request.host.empty() && !rules.replaces(Rules::forwarded_host))
        head.header("X-Forwarded-Host", request.host);
    if (!rules.replaces(Rules::request_id)) head.header("X-Request-ID", http::request_id(request));
    if (has_rules) rules.write_headers(head, request, client, ip);
    // The body goes as the client framed it: its length, or chunks the
    // proxy encodes again from the decoded data (never both: smuggling).
    if (request.chunked)
        head.header("Transfer-Encoding", "chunked");
    else if (request.has_content_length)
        head.header("Content-Length", request.content_length);
    if (websocket) {
        head.header("Connection", "Upgrade");
        head.header("Upgrade", request.header("upgrade"));
    } else if (!keep_alive) {
        head.header("Connection", "close");
    }
    head.end();
}

void add_upstream_response_headers(http::Exchange& exchange, const UpstreamResponse& response,
                                   const std::vector<std::string>& hidden,
                                   http::ExpiresHeaders* expires) {
    std::string_view connection;
    for (const http::HeaderField& field : response.headers)
        if (equals_ignore_case(field.name, "connection")) connection = field.value;
    bool switching = response.status == 101;
    bool replaced_by_expires = expires && http::takes_location_headers(response.status);
    for (const http::HeaderField& field : response.headers) {
        std::string_view name = field.name;
        bool tunnel_header = switching && (equals_ignore_case(name, "upgrade") ||
                                           equals_ignore_case(name, "connection"));
        if (!tunnel_header && (is_hop_by_hop(name) || named_in_connection(name, connection)))
            continue;
        if (equals_ignore_case(name, "content-length") ||
            equals_ignore_case(name, "transfer-encoding") || equals_ignore_case(name, "date") ||
            equals_ignore_case(name, "server") ||
            (!hidden.empty() && !tunnel_header && is_hidden(name, hidden)) ||
            (replaced_by_expires &&
             (equals_ignore_case(name, "cache-control") || equals_ignore_case(name, "expires"))))
            continue;
        exchange.add_header(name, field.value);
    }
    if (replaced_by_expires) expires->add(exchange, response.status);
}

}  // namespace portico::proxy
