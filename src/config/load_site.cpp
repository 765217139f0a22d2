// [[site]] tables (nginx's server blocks): their names, listeners, default
// flag, certificate and locations; and the unnamed site the top-level
// [[location]]s make up.
#include <algorithm>

#include "config/sections.hpp"
#include "config/site_names.hpp"

namespace portico::config {

namespace {

// Where each part of a site was written, for the checks across sites.
struct SitePlaces {
    std::vector<const toml::node*> names;  // beside SiteConfig::names
    const toml::node* is_default = nullptr;
};

// The first name as written, which labels the site's locations; "_" (nginx's
// catch-all) for a site without names.
std::string site_label(const toml::table& table) {
    const toml::node* names = table.get("names");
    const toml::array* array = names ? names->as_array() : nullptr;
    if (array && !array->empty() && array->front().is_string())
        return array->front().as_string()->get();
    return "_";
}

void read_names(TableReader& reader, SiteConfig& site, SitePlaces& places) {
    const toml::node* node = reader.get("names");
    if (!node) return;
    const toml::array* array = node->as_array();
    if (!array) {
        reader.wrong("names", *node, "an array like [\"example.com\", \"*.example.com\"]");
        return;
    }
    for (const toml::node& element : *array) {
        const auto* text = element.as_string();
        ParsedSiteName parsed = text ? parse_site_name(text->get()) : ParsedSiteName{};
        if (!text) {
            reader.wrong("names", element, "a host name");
        } else if (!parsed.error.empty()) {
            reader.report("names", element, describe(element) + ": expected " + parsed.error);
        } else {
            site.names.push_back(std::move(parsed.name));
            places.names.push_back(&element);
        }
    }
}

// Each entry must be one of the [server] or [tls] listeners: a site cannot
// open a socket of its own.
void read_listen(TableReader& reader, const std::vector<const SocketAddress*>& listeners,
                 SiteConfig& site) {
    if (!reader.read_addresses("listen", site.listen, HostNames::refused)) return;
    const toml::array& written = *reader.get("listen")->as_array();
    for (size_t i = 0; i < site.listen.size(); ++i) {
        const SocketAddress& address = site.listen[i];
        bool listed = std::any_of(listeners.begin(), listeners.end(),
                                  [&](const SocketAddress* l) { return same_socket(*l, address); });
        if (!listed)
            reader.report("listen", *written.get(i),
                          "'" + address.text + "' is not one of [server] or [tls] listen");
    }
}

void read_site(const toml::table& table, LoadContext& context, Config& config,
               std::vector<SitePlaces>& places) {
    std::string label = site_label(table);
    TableReader reader(table, "site.", "site '" + label + "'", context.diagnostics);
    SiteConfig site;
    SitePlaces place;
    site.where = position_of(table.source());
    read_names(reader, site, place);
    read_listen(reader, listeners_of(config), site);
    reader.read_bool("default", site.is_default);
    place.is_default = site.is_default ? reader.get("default") : nullptr;
    if (const toml::node* certificate = reader.get("certificate")) {
        site.certificate = read_certificate_files(*certificate, "site.certificate", context);
        if (!config.tls)
            reader.report("certificate", *certificate,
                          "needs a [tls] section: the certificate is for its listeners");
    }
    read_site_acme(reader, config, site);
    size_t index = config.sites.size();
    if (const toml::node* locations = reader.get("location")) {
        size_t first = config.locations.size();
        read_locations(*locations, context, config.upstreams, config.locations, index, label);
        for (size_t i = first; i < config.locations.size(); ++i) site.locations.push_back(i);
    }
    reader.finish();
    config.sites.push_back(std::move(site));
    places.push_back(place);
}

bool same_name(const SiteName& a, const SiteName& b) {
    return a.kind == b.kind && a.text == b.text;
}

// A listener both answer on, or nullptr.
const SocketAddress* shared_listener(const Config& config, const SiteConfig& a,
                                     const SiteConfig& b) {
    for (const SocketAddress* listener : listeners_of(config))
        if (site_answers_on(a, *listener) && site_answers_on(b, *listener)) return listener;
    return nullptr;
}

// A default = true on a listener an earlier default answers on too
// (nginx: "a duplicate default server").
void check_default(const Config& config, size_t first_named, size_t s,
                   const std::vector<SitePlaces>& places, Diagnostics& diagnostics) {
    const SiteConfig& site = config.sites[first_named + s];
    for (size_t e = 0; e < s && places[s].is_default; ++e) {
        const SiteConfig& earlier = config.sites[first_named + e];
        const SocketAddress* shared = shared_listener(config, earlier, site);
        if (!places[e].is_default || !shared) continue;
        diagnostics.error(places[s].is_default->source(),
                          "site.default: a second default site on " + shared->text +
                              " (the first is the [[site]] on line " +
                              std::to_string(earlier.where.line) + ")");
        return;
    }
}

// A name an earlier site (or this one) has on a listener this one answers
// on (nginx: "conflicting server name"): one of them would never answer.
void check_names(const Config& config, size_t first_named, size_t s,
                 const std::vector<SitePlaces>& places, Diagnostics& diagnostics) {
    const SiteConfig& site = config.sites[first_named + s];
    for (size_t n = 0; n < site.names.size(); ++n) {
        auto same = [&](const SiteName& name) { return same_name(name, site.names[n]); };
        for (size_t e = 0; e <= s; ++e) {
            const SiteConfig& earlier = config.sites[first_named + e];
            const SocketAddress* shared = shared_listener(config, earlier, site);
            auto end = e == s ? earlier.names.begin() + static_cast<long>(n) : earlier.names.end();
            if (!shared || std::none_of(earlier.names.begin(), end, same)) continue;
            diagnostics.error(places[s].names[n]->source(),
                              "site.names: " + describe(*places[s].names[n]) +
                                  " is already a name of the [[site]] on line " +
                                  std::to_string(earlier.where.line) + ", on " + shared->text);
            break;
        }
    }
}

void check_sites(const Config& config, const std::vector<SitePlaces>& places,
                 Diagnostics& diagnostics) {
    const size_t first_named = config.sites.size() - places.size();
    for (size_t s = 0; s < places.size(); ++s) {
        // With [[site]]s, an unnamed site exists only for top-level locations.
        if (places[s].is_default && first_named == 1)
            diagnostics.error(places[s].is_default->source(),
                              "site.default: the top-level [[location]]s (line " +
                                  std::to_string(config.locations.front().where.line) +
                                  ") make the site for every host no [[site]] names; move them "
                                  "into a [[site]], or drop default here");
        check_default(config, first_named, s, places, diagnostics);
        check_names(config, first_named, s, places, diagnostics);
    }
}

}  // namespace

void read_sites(const toml::node* node, LoadContext& context, Config& config) {
    // The top-level locations make up the unnamed site: the only site
    // without [[site]], else the first, answering every host no site names.
    if (!node || !config.locations.empty()) {
        SiteConfig unnamed;
        for (size_t i = 0; i < config.locations.size(); ++i) unnamed.locations.push_back(i);
        config.sites.push_back(std::move(unnamed));
    }
    if (!node) return;
    const toml::array* array = node->as_array();
    if (!array) {
        context.diagnostics.error(
            node->source(),
            "site: expected [[site]] tables (double brackets), got " + describe(*node));
        return;
    }
    std::vector<SitePlaces> places;
    for (const toml::node& element : *array) {
        if (const toml::table* table = element.as_table()) {
            read_site(*table, context, config, places);
        } else {
            context.diagnostics.error(element.source(),
                                      "site: expected a table, got " + describe(element));
        }
    }
    check_sites(config, places, context.diagnostics);
}

}  // namespace portico::config
