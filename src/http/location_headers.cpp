#include "http/location_headers.hpp"

#include "http/status.hpp"

namespace portico::http {

namespace {

bool ends_header_line(char c) {
    return c == '\r' || c == '\n' || c == '\0';
}

}  // namespace

std::string_view header_value(const config::HeaderRule& rule, const Request& request,
                              const PeerAddress& client, Captures captures, std::string& scratch) {
    if (rule.value.is_literal()) return rule.value.source;
    scratch.clear();
    expand(rule.value, request, client, captures, scratch);
    for (size_t i = 0; i < scratch.size(); ++i) {
        if (!ends_header_line(scratch[i])) continue;
        static constexpr char hex[] = "0123456789ABCDEF";
        auto byte = static_cast<unsigned char>(scratch[i]);
        const char escape[] = {'%', hex[byte >> 4], hex[byte & 15]};
        scratch.replace(i, 1, escape, sizeof escape);
        i += 2;
    }
    return scratch;
}

LocationHeaders::LocationHeaders(const config::LocationConfig& location)
    : location_(location), captures_(location, uses_captures(location.headers)) {}

void LocationHeaders::add_to(Exchange& out, int status) {
    if (!location_.headers_always && !takes_location_headers(status)) return;
    const Request& request = out.request();
    Captures captures = captures_.match(request);
    for (const config::HeaderRule& rule : location_.headers) {
        std::string_view value =
            header_value(rule, request, out.client_address(), captures, scratch_);
        if (!value.empty()) out.add_header(rule.name, value);
    }
}

}  // namespace portico::http
