// What a template's variables read for one request (config/template.hpp
// compiles them). Every rule that takes a template (proxy_headers, headers,
// redirect, rewrite, try_files, error_pages, limit keys) expands it here,
// whichever protocol carries the request.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "config/template.hpp"
#include "http/peer_address.hpp"
#include "http/request.hpp"

namespace portico::http {

// The groups of the regex a template's captures refer to: [0] the whole
// match, [1].. the groups ("" for a group that did not take part).
using Captures = std::span<const std::string_view>;

// Appends the value for this request to `out`. A variable without a value
// (no such header, a capture beyond `captures`) expands to "".
void expand(const config::Template& value, const Request& request, const PeerAddress& client,
            Captures captures, std::string& out);

// $host: the Host (or :authority) lowercase, without a port or a trailing
// dot; the site's name when the request has none. Into `buffer`.
std::string_view host_variable(const Request& request, std::string& buffer);
// A host as sites are matched on it (RFC 9110 4.2.3: case-insensitive, the
// port and a trailing dot ignored): lowercase, without them. Into `buffer`.
std::string_view normalize_host(std::string_view host, std::string& buffer);

// One cookie's value from the Cookie header(s), or an empty view.
std::string_view cookie_value(const Request& request, std::string_view name);

}  // namespace portico::http
