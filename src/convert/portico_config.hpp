// The portico config being written: tables of keys whose values are
// already TOML text, each with the comment lines that say where it came
// from and what was dropped on the way. render() lays it out.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace portico::convert {

// Keys in the order they were set; setting a key again replaces its value.
struct Entries {
    std::vector<std::pair<std::string, std::string>> items;
    void set(const std::string& key, std::string value);
    const std::string* get(const std::string& key) const;
    bool empty() const { return items.empty(); }
};

struct Table {
    std::vector<std::string> comments;  // written above the table, "# " added
    Entries entries;
};

struct SiteTable {
    Table site;
    std::vector<Table> locations;
};

struct PorticoConfig {
    std::vector<std::string> header_comments;
    Table server, log, tls, http2;
    std::vector<std::pair<std::string, std::string>> mime;  // extension, type
    std::vector<std::pair<std::string, Table>> upstreams;   // in file order
    std::vector<std::pair<std::string, Table>> limits;      // [limit.NAME]
    std::vector<std::pair<std::string, Table>> caches;      // [cache.NAME]
    std::vector<SiteTable> sites;

    Table* upstream(const std::string& name);
};

std::string render(const PorticoConfig& config);

}  // namespace portico::convert
