// An htpasswd file (Apache's, as nginx's auth_basic_user_file reads it):
// one "user:hash" a line, "#" lines and blank lines skipped, a third
// ":comment" field allowed; a user listed twice is checked against its
// first line, as in nginx. Read at load; what each hash kind is computed
// with is access/password_verifier.hpp's business.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"

namespace portico::config {

enum class HashKind : uint8_t {
    unsupported,
    bcrypt,      // $2y$, $2b$, $2a$ (libxcrypt)
    sha512,      // $6$ (libxcrypt)
    sha256,      // $5$ (libxcrypt)
    apache_md5,  // $apr1$ (access/apr1.hpp: libxcrypt does not do it)
};

HashKind hash_kind(std::string_view hash);

struct HtpasswdProblem {
    size_t line = 0;  // 1-based, in the htpasswd file
    std::string message;
};

// The good lines go to `users`, in file order; each bad one is a problem
// (the others still load).
void parse_htpasswd(std::string_view text, std::vector<HtpasswdEntry>& users,
                    std::vector<HtpasswdProblem>& problems);

}  // namespace portico::config
