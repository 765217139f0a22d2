// A location's `headers` (nginx add_header), added by the codec to the head
// of each of the location's responses, whichever protocol carries it: one
// piece both codecs call as they commit a head. A location without headers
// has none (ServerContext::serving[i].headers is null) and pays nothing.
#pragma once

#include <string>
#include <string_view>

#include "config/config.hpp"
#include "http/exchange.hpp"
#include "http/location_captures.hpp"
#include "http/server_context.hpp"

namespace portico::http {

// A header rule's value for this request: the template expanded into
// `scratch`, or its text when it is literal (no copy). A CR, LF or NUL that
// a decoded variable ($uri, a capture) brings is percent-encoded: it would
// end the header line and start another (header injection).
std::string_view header_value(const config::HeaderRule& rule, const Request& request,
                              const PeerAddress& client, Captures captures, std::string& scratch);

class LocationHeaders {
public:
    explicit LocationHeaders(const config::LocationConfig& location);

    // Adds the headers that apply to `status` to the head `out` is
    // building, each whose value is not empty.
    void add_to(Exchange& out, int status);

private:
    const config::LocationConfig& location_;
    LocationCaptures captures_;
    std::string scratch_;
};

// For the codecs, as they commit the head of a response of `location`
// (-1: none).
inline void add_location_headers(ServerContext& server, int location, int status, Exchange& out) {
    if (location < 0) return;
    if (LocationHeaders* headers = server.serving[static_cast<size_t>(location)].headers)
        headers->add_to(out, status);
}

}  // namespace portico::http
