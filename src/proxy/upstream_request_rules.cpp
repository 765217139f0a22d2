#include "proxy/upstream_request_rules.hpp"

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
}

bool UpstreamRequestRules::sets(std::string_view name) const {
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

void UpstreamRequestRules::write_headers(http::ResponseHead& head, const http::Request& request,
                                         const http::PeerAddress& client) {
    http::Captures captures = captures_.match(request);
    for (const config::HeaderRule& rule : location_.proxy_headers) {
        std::string_view value = http::header_value(rule, request, client, captures, scratch_);
        if (!value.empty()) head.header(rule.name, value);
    }
}

}  // namespace portico::proxy
