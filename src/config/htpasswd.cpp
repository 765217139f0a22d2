#include "config/htpasswd.hpp"

#include <algorithm>

namespace portico::config {

namespace {

// The characters of crypt(3)'s salts and hashes (./0-9A-Za-z).
bool is_crypt64(std::string_view text) {
    return std::all_of(text.begin(), text.end(), [](char c) {
        return c == '.' || c == '/' || (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') ||
               (c >= 'a' && c <= 'z');
    });
}

// "$apr1$SALT$HASH": a salt of 1 to 8 characters, a hash of 22.
bool is_apr1(std::string_view hash) {
    std::string_view rest = hash.substr(6);
    size_t dollar = rest.find('$');
    if (dollar == std::string_view::npos || dollar == 0 || dollar > 8) return false;
    std::string_view digest = rest.substr(dollar + 1);
    return digest.size() == 22 && is_crypt64(rest.substr(0, dollar)) && is_crypt64(digest);
}

// "$2y$NN$" and 53 characters: 22 of salt, 31 of hash.
bool is_bcrypt(std::string_view hash) {
    return hash.size() == 60 && hash[6] == '$' && hash[4] >= '0' && hash[4] <= '3' &&
           hash[5] >= '0' && hash[5] <= '9' && is_crypt64(hash.substr(7));
}

// "$5$[rounds=N$]SALT$HASH" (or $6$): the hash is 43 or 86 characters.
bool is_sha_crypt(std::string_view hash, size_t digest_size) {
    size_t last = hash.rfind('$');
    return last > 2 && hash.size() - last - 1 == digest_size && is_crypt64(hash.substr(last + 1));
}

}  // namespace

HashKind hash_kind(std::string_view hash) {
    if (hash.starts_with("$2y$") || hash.starts_with("$2b$") || hash.starts_with("$2a$"))
        return is_bcrypt(hash) ? HashKind::bcrypt : HashKind::unsupported;
    if (hash.starts_with("$6$"))
        return is_sha_crypt(hash, 86) ? HashKind::sha512 : HashKind::unsupported;
    if (hash.starts_with("$5$"))
        return is_sha_crypt(hash, 43) ? HashKind::sha256 : HashKind::unsupported;
    if (hash.starts_with("$apr1$"))
        return is_apr1(hash) ? HashKind::apache_md5 : HashKind::unsupported;
    return HashKind::unsupported;
}

void parse_htpasswd(std::string_view text, std::vector<HtpasswdEntry>& users,
                    std::vector<HtpasswdProblem>& problems) {
    size_t number = 0;
    while (!text.empty()) {
        ++number;
        size_t end = text.find('\n');
        std::string_view line = text.substr(0, end);
        text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
        if (line.ends_with('\r')) line.remove_suffix(1);
        if (line.empty() || line.front() == '#') continue;
        size_t colon = line.find(':');
        if (colon == std::string_view::npos || colon == 0) {
            problems.push_back({number, "expected \"user:hash\""});
            continue;
        }
        std::string_view user = line.substr(0, colon);
        std::string_view hash = line.substr(colon + 1);
        hash = hash.substr(0, hash.find(':'));  // a third field is a comment
        if (hash.empty()) {
            problems.push_back({number, "user '" + std::string(user) + "' has no hash"});
            continue;
        }
        if (hash_kind(hash) == HashKind::unsupported) {
            // The hash itself stays out of the message: it is a secret too.
            problems.push_back(
                {number,
                 "user '" + std::string(user) +
                     "': not a hash portico checks (bcrypt $2y$/$2b$/$2a$, SHA-512 or "
                     "SHA-256 crypt $6$/$5$, Apache MD5 $apr1$; htpasswd -B makes bcrypt)"});
            continue;
        }
        users.push_back({std::string(user), std::string(hash)});
    }
}

}  // namespace portico::config
