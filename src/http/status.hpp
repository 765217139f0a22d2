#pragma once

#include <string_view>

namespace portico::http {

// The reason phrase for a status code ("Not Found"); "Unknown" for codes
// without one (the phrase carries no meaning in HTTP/1.1, RFC 9112 4).
std::string_view reason_phrase(int status);

}  // namespace portico::http

namespace portico::http {

// "404 Not Found\n": the plain-text body of an error response (static storage).
std::string_view status_text(int status);

}  // namespace portico::http
