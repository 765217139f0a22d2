// The credentials of an "Authorization: Basic base64(user:password)" header
// (RFC 7617). Anything else (another scheme, bad base64, no colon, too
// long) is simply no credentials: the answer is a 401 either way, never a
// 400, as nginx's auth_basic does.
#pragma once

#include <string>
#include <string_view>

namespace portico::access {

// Decoded credentials longer than this are refused unread: an htpasswd
// user and password are short, and a huge header must cost nothing.
constexpr size_t max_credentials_size = 1024;

struct BasicCredentials {
    std::string_view user;      // into `decoded`
    std::string_view password;  // into `decoded`
};

// Decodes `header` (the Authorization value) into `decoded`, which the
// result views. False when it is not Basic credentials.
bool parse_basic_credentials(std::string_view header, std::string& decoded, BasicCredentials& out);

}  // namespace portico::access
