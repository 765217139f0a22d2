#include "router/sites.hpp"

namespace portico::router {

namespace {

// As the operator wrote it: "*.example.com", "~^(?P<sub>.+)\.example\.com$".
std::string written(const config::SiteName& name) {
    switch (name.kind) {
    case config::SiteName::Kind::wildcard:
        return "*" + name.text;
    case config::SiteName::Kind::regex:
        return "~" + name.text;
    case config::SiteName::Kind::exact:
        break;
    }
    return name.text;
}

}  // namespace

Sites::Sites(const config::Config& config) {
    for (const config::SiteConfig& site : config.sites) {
        routers_.push_back(std::make_unique<Router>(config.locations, site.locations));
        server_names_.push_back(site.names.empty() ? std::string() : written(site.names.front()));
    }
    for (const config::SocketAddress* address : config::listeners_of(config)) {
        Listener& listener = listeners_.emplace_back();
        int marked = -1, first = -1;
        for (size_t s = 0; s < config.sites.size(); ++s) {
            const config::SiteConfig& site = config.sites[s];
            if (!config::site_answers_on(site, *address)) continue;
            listener.names.add(site, static_cast<int>(s));
            if (first < 0) first = static_cast<int>(s);
            if (site.is_default && marked < 0) marked = static_cast<int>(s);
        }
        // With none marked, the first site of the file that answers here (a
        // listener no site answers on is the first site's).
        listener.default_site = static_cast<size_t>(marked >= 0 ? marked : first >= 0 ? first : 0);
    }
    single_ = config.sites.size() == 1;
}

}  // namespace portico::router
