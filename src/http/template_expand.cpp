#include "http/template_expand.hpp"

#include <arpa/inet.h>

#include <charconv>

#include "http/header_text.hpp"

namespace portico::http {

std::string_view host_variable(const Request& request, std::string& buffer) {
    if (request.host.empty()) return request.server_name;
    return normalize_host(request.host, buffer);
}

std::string_view normalize_host(std::string_view host, std::string& buffer) {
    if (host.empty()) return host;
    if (host.front() == '[') {
        host = host.substr(0, host.find(']') + 1);
    } else {
        host = host.substr(0, host.find(':'));
        if (host.ends_with('.')) host.remove_suffix(1);
    }
    buffer.assign(host);
    for (char& c : buffer)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return buffer;
}

std::string_view cookie_value(const Request& request, std::string_view name) {
    for (const HeaderField& field : request.headers) {
        if (!equals_ignore_case(field.name, "cookie")) continue;
        std::string_view rest = field.value;
        while (!rest.empty()) {
            size_t end = rest.find(';');
            std::string_view pair = rest.substr(0, end);
            rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
            while (!pair.empty() && (pair.front() == ' ' || pair.front() == '\t'))
                pair.remove_prefix(1);
            if (pair.size() > name.size() && pair.starts_with(name) && pair[name.size()] == '=')
                return pair.substr(name.size() + 1);
        }
    }
    return {};
}

void expand(const config::Template& value, const Request& request, const PeerAddress& client,
            Captures captures, std::string& out) {
    using config::Variable;
    for (const config::TemplatePart& part : value.parts) {
        switch (part.variable) {
        case Variable::text:
            out += part.text;
            break;
        case Variable::host: {
            std::string buffer;
            out += host_variable(request, buffer);
            break;
        }
        case Variable::server_name:
            out += request.server_name;
            break;
        case Variable::server_port: {
            char digits[8];
            auto [end, error] = std::to_chars(digits, digits + sizeof digits, request.server_port);
            out.append(digits, end);
            break;
        }
        case Variable::scheme:
            out += request.secure ? "https" : "http";
            break;
        case Variable::request_uri:
            out += request.target;
            break;
        case Variable::uri:
            out += request.normalized_path;
            break;
        case Variable::args:
            out += request.query;
            break;
        case Variable::remote_addr: {
            char text[INET6_ADDRSTRLEN];
            out += format_ip(client, text, sizeof text);
            break;
        }
        case Variable::request_id:
            out += request_id(request);
            break;
        case Variable::http: {
            // Repeated headers are joined with ", " (RFC 9110 5.3), cookies with "; ".
            bool first = true;
            for (const HeaderField& field : request.headers) {
                if (!equals_ignore_case(field.name, part.text)) continue;
                if (!first) out += part.text == "cookie" ? "; " : ", ";
                out += field.value;
                first = false;
            }
            break;
        }
        case Variable::cookie:
            out += cookie_value(request, part.text);
            break;
        case Variable::capture:
            if (static_cast<size_t>(part.capture) < captures.size())
                out += captures[static_cast<size_t>(part.capture)];
            break;
        }
    }
}

}  // namespace portico::http
