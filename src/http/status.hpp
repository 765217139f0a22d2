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

}  // namespace portico::http

namespace portico::http {

// "404 Not Found\n": the plain-text body of an error response (static storage).
std::string_view status_text(int status);

}  // namespace portico::http
