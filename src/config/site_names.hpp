// Site names compiled for lookup, in nginx's server_name order: an exact
// name (one hash lookup), then the longest leading wildcard, then the
// regexes in file order. The router chooses a site per listener with it
// (router/sites.hpp), the TLS layer a certificate by SNI (tls/server_tls).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "config/config.hpp"

namespace re2 {
class RE2;
}

namespace portico::config {

class SiteNames {
public:
    SiteNames();
    ~SiteNames();
    SiteNames(SiteNames&&) noexcept;
    SiteNames& operator=(SiteNames&&) noexcept;

    // Adds every name of `site` (in file order: the first added wins a tie).
    void add(const SiteConfig& site, int index);

    // The site whose names match `host`, which is lowercase, without a port
    // or a trailing dot (http::host_variable); -1 when none does.
    int match(std::string_view host) const;
    bool empty() const { return exact_.empty() && wildcards_.empty() && regexes_.empty(); }

private:
    struct Hash {
        using is_transparent = void;
        size_t operator()(std::string_view text) const {
            return std::hash<std::string_view>{}(text);
        }
    };
    std::unordered_map<std::string, int, Hash, std::equal_to<>> exact_;
    std::vector<std::pair<std::string, int>> wildcards_;  // ".example.com", longest first
    std::vector<std::pair<std::unique_ptr<re2::RE2>, int>> regexes_;
};

// The listeners, in the order every layer numbers them: [server] listen,
// then [tls] listen.
std::vector<const SocketAddress*> listeners_of(const Config& config);
// A site without `listen` answers on every listener.
bool site_answers_on(const SiteConfig& site, const SocketAddress& listener);

// A name as the operator wrote it ("*.example.com", "~^www\.", "example.com"),
// or the reason it is not one. Regex groups spelled (?<name>...) become RE2's
// (?P<name>...).
struct ParsedSiteName {
    SiteName name;
    std::string error;  // empty: valid
};
ParsedSiteName parse_site_name(std::string_view text);

}  // namespace portico::config
