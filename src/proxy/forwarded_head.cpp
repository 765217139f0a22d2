#include "proxy/forwarded_head.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include "http/header_text.hpp"
#include "http/path_encoding.hpp"

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

}  // namespace

bool is_websocket_request(const http::Request& request, const config::LocationConfig& location) {
    return location.websocket && request.upgrade &&
           equals_ignore_case(request.header("upgrade"), "websocket");
}

void write_upstream_request_head(http::ResponseHead& head, const http::Request& request,
                                 const http::PeerAddress& client, std::string_view server_address,
                                 bool preserve_host, bool websocket, bool keep_alive) {
    // An absolute-form target goes upstream in origin form (RFC 9112 3.2.2).
    std::string_view target = request.target;
    if (!request.authority.empty()) target = request.target.substr(request.path.data() - request.target.data());
    // A rewrite or an error page chose another path: it goes as a URI again.
    std::string rewritten;
    if (request.uri_changed) {
        http::append_encoded_path(rewritten, request.normalized_path);
        if (!request.query.empty()) {
            rewritten += '?';
            rewritten += request.query;
        }
        target = rewritten;
    }
    head.append(request.method_name);
    head.append(" ");
    head.append(target.empty() ? "/" : target);
    head.append(" HTTP/1.1\r\n");
    head.header("Host", preserve_host && !request.host.empty() ? request.host : server_address);

    std::string_view connection = request.header("connection");
    bool has_forwarded_for = false;
    for (const http::HeaderField& field : request.headers) {
        std::string_view name = field.name;
        if (is_hop_by_hop(name) || named_in_connection(name, connection) ||
            equals_ignore_case(name, "host") || equals_ignore_case(name, "x-real-ip") ||
            equals_ignore_case(name, "x-forwarded-proto") ||
            equals_ignore_case(name, "x-forwarded-host") ||
            // The client got its 100 from us; the body streams anyway.
            equals_ignore_case(name, "expect") ||
            // The body's framing is ours to write (below).
            equals_ignore_case(name, "content-length") ||
            equals_ignore_case(name, "transfer-encoding"))
            continue;
        if (equals_ignore_case(name, "x-forwarded-for")) {
            has_forwarded_for = true;
            continue;
        }
        head.header(name, field.value);
    }
    char ip_buffer[INET6_ADDRSTRLEN];
    std::string_view ip = http::format_ip(client, ip_buffer, sizeof ip_buffer);
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
    head.header("X-Real-IP", ip);
    head.header("X-Forwarded-Proto", request.secure ? "https" : "http");
    if (!request.host.empty()) head.header("X-Forwarded-Host", request.host);
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

void add_upstream_response_headers(http::Exchange& exchange, const UpstreamResponse& response) {
    std::string_view connection;
    for (const http::HeaderField& field : response.headers)
        if (equals_ignore_case(field.name, "connection")) connection = field.value;
    bool switching = response.status == 101;
    for (const http::HeaderField& field : response.headers) {
        std::string_view name = field.name;
        bool tunnel_header = switching && (equals_ignore_case(name, "upgrade") ||
                                           equals_ignore_case(name, "connection"));
        if (!tunnel_header && (is_hop_by_hop(name) || named_in_connection(name, connection)))
            continue;
        if (equals_ignore_case(name, "content-length") ||
            equals_ignore_case(name, "transfer-encoding") || equals_ignore_case(name, "date") ||
            equals_ignore_case(name, "server"))
            continue;
        exchange.add_header(name, field.value);
    }
}

}  // namespace portico::proxy
