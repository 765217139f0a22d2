#include "config/site_names.hpp"

#include "config/sections.hpp"

#include <re2/re2.h>

#include <algorithm>
#include <cctype>

namespace portico::config {

namespace {

std::unique_ptr<re2::RE2> compile(const std::string& pattern) {
    re2::RE2::Options options;
    options.set_log_errors(false);
    return std::make_unique<re2::RE2>(pattern, options);
}

// PCRE's and nginx's (?<name>...) is RE2's (?P<name>...); a lookbehind
// "(?<=" or "(?<!" is not a group name and RE2 refuses it anyway.
std::string with_re2_group_names(std::string_view pattern) {
    std::string out;
    for (size_t i = 0; i < pattern.size(); ++i) {
        out += pattern[i];
        if (pattern[i] == '\\' && i + 1 < pattern.size()) {
            out += pattern[++i];
            continue;
        }
        if (pattern.substr(i).starts_with("(?<") && i + 3 < pattern.size() &&
            pattern[i + 3] != '=' && pattern[i + 3] != '!') {
            out += "?P<";
            i += 2;
        }
    }
    return out;
}

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

}  // namespace

ParsedSiteName parse_site_name(std::string_view text) {
    ParsedSiteName parsed;
    if (text.starts_with('~')) {
        parsed.name.kind = SiteName::Kind::regex;
        parsed.name.text = with_re2_group_names(text.substr(1));
        auto compiled = compile(parsed.name.text);
        if (parsed.name.text.empty())
            parsed.error = "an empty regex";
        else if (!compiled->ok())
            parsed.error = "not a valid RE2 regular expression: " + compiled->error();
        return parsed;
    }
    std::string name(text);
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    // Hosts are compared without their trailing dot (the root label).
    if (name.size() > 1 && name.ends_with('.')) name.pop_back();
    bool ipv6 = name.starts_with('[') && name.ends_with(']');
    if (name.empty() || name == ".") {
        parsed.error = "an empty name (a site for every other host is default = true)";
    } else if (!ipv6 && name.find(':') != std::string::npos) {
        parsed.error = "a host name without a port (the port is the listener's: use listen)";
    } else if (name.find('/') != std::string::npos ||
               std::any_of(name.begin(), name.end(), is_space)) {
        parsed.error = "a host name, without '/' or spaces";
    } else if (name.starts_with("*.") && name.size() > 2 &&
               name.find('*', 1) == std::string::npos) {
        parsed.name.kind = SiteName::Kind::wildcard;
        parsed.name.text = name.substr(1);
    } else if (name.find('*') != std::string::npos || name.starts_with('.')) {
        parsed.error = "an exact name, a leading wildcard \"*.example.com\" or a regex \"~...\"";
    } else {
        parsed.name.text = std::move(name);
    }
    return parsed;
}

std::vector<const SocketAddress*> listeners_of(const Config& config) {
    std::vector<const SocketAddress*> listeners;
    for (const SocketAddress& address : config.server.listen) listeners.push_back(&address);
    if (config.tls)
        for (const SocketAddress& address : config.tls->listen) listeners.push_back(&address);
    return listeners;
}

bool site_answers_on(const SiteConfig& site, const SocketAddress& listener) {
    // An entry on port 0 (tests) names every port-0 listener of its address.
    return site.listen.empty() ||
           std::any_of(site.listen.begin(), site.listen.end(), [&](const SocketAddress& address) {
               return same_socket(address, listener);
           });
}

SiteNames::SiteNames() = default;
SiteNames::~SiteNames() = default;
SiteNames::SiteNames(SiteNames&&) noexcept = default;
SiteNames& SiteNames::operator=(SiteNames&&) noexcept = default;

void SiteNames::add(const SiteConfig& site, int index) {
    for (const SiteName& name : site.names) {
        switch (name.kind) {
        case SiteName::Kind::exact:
            exact_.emplace(name.text, index);
            break;
        case SiteName::Kind::wildcard:
            wildcards_.emplace_back(name.text, index);
            break;
        case SiteName::Kind::regex:
            if (auto re = compile(name.text); re->ok()) regexes_.emplace_back(std::move(re), index);
            break;
        }
    }
    std::stable_sort(wildcards_.begin(), wildcards_.end(),
                     [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
}

int SiteNames::match(std::string_view host) const {
    if (auto exact = exact_.find(host); exact != exact_.end()) return exact->second;
    // "*.example.com" is ".example.com": any host ending so, with at least
    // one label before (nginx: a.example.com and a.b.example.com, not
    // example.com).
    for (const auto& [suffix, index] : wildcards_)
        if (host.size() > suffix.size() && host.ends_with(suffix)) return index;
    for (const auto& [re, index] : regexes_)
        if (re2::RE2::PartialMatch(host, *re)) return index;
    return -1;
}

}  // namespace portico::config
