// Apache's "$apr1$" password hash (htpasswd -m, openssl passwd -apr1), which
// libxcrypt does not compute: Poul-Henning Kamp's FreeBSD MD5-crypt with
// "$apr1$" as its magic string, made here from OpenSSL's MD5.
#pragma once

#include <string>
#include <string_view>

namespace portico::access {

// The whole "$apr1$SALT$HASH" for `password` and `salt` (the salt's first
// 8 characters count, as in Apache's apr_md5_encode).
std::string apr1_hash(std::string_view password, std::string_view salt);

}  // namespace portico::access
