#include "convert/portico_config.hpp"

#include "convert/toml_text.hpp"

namespace portico::convert {

void Entries::set(const std::string& key, std::string value) {
    for (auto& [name, current] : items) {
        if (name == key) {
            current = std::move(value);
            return;
        }
    }
    items.emplace_back(key, std::move(value));
}

const std::string* Entries::get(const std::string& key) const {
    for (const auto& [name, value] : items) {
        if (name == key) return &value;
    }
    return nullptr;
}

Table* PorticoConfig::upstream(const std::string& name) {
    for (auto& [upstream_name, table] : upstreams) {
        if (upstream_name == name) return &table;
    }
    return nullptr;
}

namespace {

// A comment is one line, whatever the nginx text it quotes held.
void write_comment(std::string& out, const std::string& comment) {
    out += "# ";
    for (char c : comment) out += (c == '\n' || c == '\r') ? ' ' : c;
    out += "\n";
}

void write_table(std::string& out, const std::string& header, const Table& table,
                 bool write_empty) {
    if (table.entries.empty() && !write_empty) {
        for (const std::string& comment : table.comments) write_comment(out, comment);
        if (!table.comments.empty()) out += "\n";
        return;
    }
    for (const std::string& comment : table.comments) write_comment(out, comment);
    out += header + "\n";
    for (const auto& [key, value] : table.entries.items)
        out += toml_key(key) + " = " + value + "\n";
    out += "\n";
}

}  // namespace

std::string render(const PorticoConfig& config) {
    std::string out;
    for (const std::string& comment : config.header_comments) write_comment(out, comment);
    if (!config.header_comments.empty()) out += "\n";
    write_table(out, "[server]", config.server, true);
    write_table(out, "[log]", config.log, false);
    if (!config.mime.empty()) {
        out += "[mime]\n";
        for (const auto& [extension, type] : config.mime)
            out += toml_key(extension) + " = " + toml_string(type) + "\n";
        out += "\n";
    }
    write_table(out, "[tls]", config.tls, false);
    write_table(out, "[http2]", config.http2, false);
    for (const auto& [name, table] : config.upstreams)
        write_table(out, "[upstream." + toml_key(name) + "]", table, true);
    for (const auto& [name, table] : config.limits)
        write_table(out, "[limit." + toml_key(name) + "]", table, true);
    for (const auto& [name, table] : config.caches)
        write_table(out, "[cache." + toml_key(name) + "]", table, true);
    for (const SiteTable& site : config.sites) {
        write_table(out, "[[site]]", site.site, true);
        for (const Table& location : site.locations)
            write_table(out, "[[site.location]]", location, true);
    }
    return out;
}

}  // namespace portico::convert
