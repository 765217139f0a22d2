// The sites compiled at load: for each listener, which site answers a host
// (exact name, longest leading wildcard, regex in file order, else the
// listener's default); for each site, its locations' Router.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "config/site_names.hpp"
#include "router/router.hpp"

namespace portico::router {

class Sites {
public:
    // `config` must outlive the Sites.
    explicit Sites(const config::Config& config);

    // One site on every listener: nothing to choose, no Host to look at.
    bool single() const { return single_; }

    // The site for `host` (lowercase, no port or trailing dot; empty: the
    // listener's default) on `listener` (config::listeners_of's index).
    size_t select(size_t listener, std::string_view host) const {
        const Listener& on = listeners_[listener < listeners_.size() ? listener : 0];
        int named = host.empty() ? -1 : on.names.match(host);
        return named >= 0 ? static_cast<size_t>(named) : on.default_site;
    }

    const Router& router(size_t site) const { return *routers_[site]; }
    // $server_name: the site's first name as written; "" for a site without.
    std::string_view server_name(size_t site) const { return server_names_[site]; }

private:
    struct Listener {
        config::SiteNames names;  // of the sites answering on it
        size_t default_site = 0;
    };
    std::vector<Listener> listeners_;
    std::vector<std::unique_ptr<Router>> routers_;
    std::vector<std::string> server_names_;
    bool single_ = true;
};

}  // namespace portico::router
