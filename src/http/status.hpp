#pragma once

#include <string_view>

namespace portico::http {

// nginx's code for a request whose client left before the response was
// out (closed its connection, or reset its HTTP/2 stream): in the access
// log and the counters, never on the wire.
constexpr int client_closed_request = 499;

// RFC 9110 6.4.1: these never have a body, so they carry no Content-Length.
constexpr bool is_bodyless_status(int status) { return status < 200 || status == 204 || status == 304; }

// The reason phrase for a status code ("Not Found"); "Unknown" for codes
// without one (the phrase carries no meaning in HTTP/1.1, RFC 9112 4).
std::string_view reason_phrase(int status);

// The statuses nginx's add_header and expires apply to by default (200,
// 201, 204, 206, 301, 302, 303, 304, 307, 308): a location's `headers`
// (without headers_always) and `expires` alike.
constexpr bool takes_location_headers(int status) {
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

}  // namespace portico::http

namespace portico::http {

// "404 Not Found\n": the plain-text body of an error response (static storage).
std::string_view status_text(int status);

}  // namespace portico::http
