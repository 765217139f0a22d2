#include "proxy/upstream_request_rules.hpp"

#include <charconv>

#include "http/header_text.hpp"
#include "http/location_headers.hpp"
#include "http/path_encoding.hpp"

namespace portico::proxy {

namespace {

constexpr std::pair<std::string_view, UpstreamRequestRules::Default> default_headers[] = {
    {"host", UpstreamRequestRules::host},
    {"x-forwarded-for", UpstreamRequestRules::forwarded_for},
    {"x-real-ip", UpstreamRequestRules::real_ip},
    {"x-forwarded-proto", UpstreamRequestRules::forwarded_proto},
    {"x-forwarded-host", UpstreamRequestRules::forwarded_host},
    {"x-request-id", UpstreamRequestRules::request_id},
};

}  // namespace

UpstreamRequestRules::UpstreamRequestRules(const config::LocationConfig& location)
    : location_(location), captures_(location, http::uses_captures(location.proxy_headers)) {
    for (const config::HeaderRule& rule : location.proxy_headers)
        for (const auto& [name, header] : default_headers)
            if (http::equals_ignore_case(rule.name, name)) replaced_ |= header;
    // cache_control stays a file option: a location's "public" must not
    // reach the application's pages, which may be a user's own.
    if (location.expires) expires_.emplace(*location.expires, std::nullopt);
    for (const config::HeaderRule& rule : location.proxy_headers) {
        set_lengths_ |= uint64_t{1} << length_bit(rule.name.size());
        const config::Template& value = rule.value;
        std::string named = rule.name + ": ";
        if (value.is_literal()) {
            // An empty one only removes the header.
            if (!value.source.empty())
                written_.push_back({Kind::line, &rule, named + value.source + "\r\n"});
        } else if (value.parts.size() == 1 &&
                   value.parts[0].variable == config::Variable::server_port) {
            written_.push_back({Kind::server_port, &rule, std::move(named)});
        } else if (value.parts.size() == 1 &&
                   value.parts[0].variable == config::Variable::remote_addr) {
            written_.push_back({Kind::remote_addr, &rule, {}});
        } else {
            written_.push_back({Kind::expanded, &rule, std::move(named)});
        }
    }
}

bool UpstreamRequestRules::sets_by_name(std::string_view name) const {
    for (const config::HeaderRule& rule : location_.proxy_headers)
        if (http::equals_ignore_case(rule.name, name)) return true;
    return false;
}

void UpstreamRequestRules::write_target(http::ResponseHead& head,
                                        const http::Request& request) const {
    if (!request.uri_changed && location_.proxy_path.empty()) {
        // An absolute-form target goes upstream in origin form (RFC 9112 3.2.2).
        std::string_view target = request.target;
        if (!request.authority.empty())
            target.remove_prefix(request.path.data() - request.target.data());
        head.append(target.empty() ? "/" : target);
        return;
    }
    // nginx's proxy_pass with a URI: the normalized path, its matched prefix
    // replaced. Not the raw one: "/apix/../api/y" matches prefix "/api" once
    // normalized, and its raw rest would climb out of proxy_path upstream.
    // A path a rewrite moved out of the prefix (`break`) goes whole, as in nginx.
    std::string_view path = request.normalized_path;
    if (!location_.proxy_path.empty() && path.starts_with(location_.pattern)) {
        head.append(location_.proxy_path);
        path.remove_prefix(location_.pattern.size());
    }
    http::encode_path(path, [&head](std::string_view piece) { head.append(piece); });
    if (!request.query.empty()) {
        head.append("?");
        head.append(request.query);
    }
}

// The listener's port changes seldom (one worker serves all listeners):
// the line is formatted again only then.
void UpstreamRequestRules::write_port_line(Written& written, const http::Request& request) {
    written.port = request.server_port;
    written.line.assign(written.rule->name).append(": ");
    char digits[8];
    auto [end, error] = std::to_chars(digits, digits + sizeof digits, request.server_port);
    (void)error;  // 8 digits hold any port
    written.line.append(digits, end).append("\r\n");
}

void UpstreamRequestRules::write_headers(http::ResponseHead& head, const http::Request& request,
                                         const http::PeerAddress& client,
                                         std::string_view client_ip) {
    http::Captures captures;
    bool matched = false;  // the location's pattern, once, for the first template that needs it
    for (Written& written : written_) {
        switch (written.kind) {
        case Kind::line:
            head.append(written.line);
            break;
        case Kind::server_port:
            if (written.port != request.server_port) write_port_line(written, request);
            head.append(written.line);
            break;
        case Kind::remote_addr:
            head.header(written.rule->name, client_ip);
            break;
        case Kind::expanded: {
            if (!matched) captures = captures_.match(request);
            matched = true;
            std::string_view value =
                http::header_value(*written.rule, request, client, captures, scratch_);
            if (value.empty()) break;
            head.append(written.line);
            head.append(value);
            head.append("\r\n");
            break;
        }
        }
    }
}

}  // namespace portico::proxy
