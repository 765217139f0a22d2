#include "http/location_headers.hpp"

namespace portico::http {

namespace {

// nginx's add_header statuses: the others get the headers with
// headers_always (nginx's `always`).
bool takes_headers_by_default(int status) {
    switch (status) {
    case 200:
    case 201:
    case 204:
    case 206:
    case 301:
    case 302:
    case 303:
    case 304:
    case 307:
    case 308:
        return true;
    default:
        return false;
    }
}

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
    if (!location_.headers_always && !takes_headers_by_default(status)) return;
    const Request& request = out.request();
    Captures captures = captures_.match(request);
    for (const config::HeaderRule& rule : location_.headers) {
        std::string_view value =
            header_value(rule, request, out.client_address(), captures, scratch_);
        if (!value.empty()) out.add_header(rule.name, value);
    }
}

}  // namespace portico::http
