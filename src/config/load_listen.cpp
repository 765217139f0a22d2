// `listen` of [server] and [tls]: "IP:port" entries, or tables for a
// listener with options ({ address = "IP:port", proxy_protocol = true }).
#include "config/sections.hpp"
#include "config/units.hpp"

namespace portico::config {

namespace {

std::optional<SocketAddress> listen_entry(TableReader& reader, std::string_view key,
                                          const toml::node& element, LoadContext& context) {
    if (const auto* text = element.as_string()) {
        std::string why;
        auto address = parse_socket_address(text->get(), HostNames::refused, why);
        if (!address) reader.report(key, element, describe(element) + ": " + why);
        return address;
    }
    const auto* table = element.as_table();
    if (!table) {
        reader.wrong(key, element,
                     "\"IP:port\" or { address = \"IP:port\", proxy_protocol = true }");
        return std::nullopt;
    }
    TableReader entry(*table, reader.field(key) + ".", "a " + reader.field(key) + " entry",
                      context.diagnostics);
    SocketAddress address;
    bool read = entry.require("address", "address = \"0.0.0.0:8081\"") &&
                entry.read_address("address", address, HostNames::refused);
    entry.read_bool("proxy_protocol", address.proxy_protocol);
    entry.finish();
    if (!read) return std::nullopt;
    return address;
}

}  // namespace

bool read_listen(TableReader& reader, std::string_view key, LoadContext& context,
                 std::vector<SocketAddress>& out) {
    const toml::node* value = reader.get(key);
    if (!value) return false;
    const auto* array = value->as_array();
    if (!array || array->empty()) {
        reader.wrong(key, *value, "a non-empty array like [\"127.0.0.1:8080\"]");
        return false;
    }
    std::vector<SocketAddress> addresses;
    for (const toml::node& element : *array)
        if (auto address = listen_entry(reader, key, element, context))
            addresses.push_back(std::move(*address));
    bool all_valid = addresses.size() == array->size();
    if (all_valid) out = std::move(addresses);
    return all_valid;
}

}  // namespace portico::config
