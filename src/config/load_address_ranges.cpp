// Lists of address ranges: [server] trusted_proxies (and access control's
// allow/deny lists), each entry checked at its own line and column.
#include "config/address_range.hpp"
#include "config/sections.hpp"

namespace portico::config {

bool read_address_ranges(TableReader& reader, std::string_view key,
                         std::vector<AddressRange>& out) {
    const toml::node* value = reader.get(key);
    if (!value) return false;
    const auto* array = value->as_array();
    if (!array) {
        reader.wrong(key, *value, "an array like [\"10.0.0.0/8\", \"::1\"]");
        return false;
    }
    std::vector<AddressRange> ranges;
    for (const toml::node& element : *array) {
        const auto* text = element.as_string();
        if (!text) {
            reader.wrong(key, element, "\"IP/BITS\" or \"IP\"");
            continue;
        }
        std::string why;
        if (auto range = parse_address_range(text->get(), why))
            ranges.push_back(std::move(*range));
        else
            reader.report(key, element, describe(element) + ": " + why);
    }
    bool all_valid = ranges.size() == array->size();
    if (all_valid) out = std::move(ranges);
    return all_valid;
}

}  // namespace portico::config
