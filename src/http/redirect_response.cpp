#include "http/redirect_response.hpp"

#include <algorithm>
#include <string>

namespace portico::http {

namespace {

bool is_control_or_space(char c) {
    auto byte = static_cast<unsigned char>(c);
    return byte <= 0x20 || byte == 0x7f;
}

}  // namespace

void answer_redirect(Exchange& client, int status, std::string_view location,
                     std::string_view body) {
    // $uri and a rewrite's captures are decoded: a %0D%0A in the request
    // would end the Location line and add a header of the client's choice
    // (the classic `return 301 https://host$uri` injection). Such bytes,
    // and spaces, go out percent-encoded.
    std::string encoded;
    if (std::any_of(location.begin(), location.end(), is_control_or_space)) {
        static constexpr char hex[] = "0123456789ABCDEF";
        for (char c : location) {
            if (!is_control_or_space(c)) {
                encoded += c;
                continue;
            }
            auto byte = static_cast<unsigned char>(c);
            encoded += '%';
            encoded += hex[byte >> 4];
            encoded += hex[byte & 15];
        }
        location = encoded;
    }
    client.begin_response(status, body.size());
    client.add_header("Location", location);
    client.add_header("Content-Type", "text/plain; charset=utf-8");
    client.send_body(body);
    client.end_response();
}

}  // namespace portico::http
