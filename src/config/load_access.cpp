// A location's allow and deny lists (nginx allow/deny; access/address_rules.hpp
// judges them): CIDR ranges, bare IPs and "all", each entry checked at its own
// line and column.
#include <cstring>
#include <string>

#include "config/address_range.hpp"
#include "config/sections.hpp"

namespace portico::config {

namespace {

// Two entries of the same prefix: the lists have no order between them, so
// one in each would leave the address's verdict undecided ("all" is the
// length-0 prefix of both families).
bool same_prefix(const AccessRule& a, const AccessRule& b) {
    if (a.all || b.all) {
        const AccessRule& other = a.all ? b : a;
        return other.all || other.range.prefix_length == 0;
    }
    return a.range.family == b.range.family && a.range.prefix_length == b.range.prefix_length &&
           std::memcmp(a.range.bytes, b.range.bytes, sizeof a.range.bytes) == 0;
}

struct Read {
    AccessRule rule;
    const toml::node* node;
};

void read_list(TableReader& reader, std::string_view key, bool allow, std::vector<Read>& out) {
    const toml::node* value = reader.get(key);
    if (value == nullptr) return;
    const auto* array = value->as_array();
    if (array == nullptr) {
        reader.wrong(key, *value, "an array like [\"10.0.0.0/8\", \"::1\", \"all\"]");
        return;
    }
    for (const toml::node& element : *array) {
        const auto* text = element.as_string();
        if (text == nullptr) {
            reader.wrong(key, element, "\"IP/BITS\", \"IP\" or \"all\"");
            continue;
        }
        AccessRule rule;
        rule.allow = allow;
        std::string why;
        if (text->get() == "all") {
            rule.all = true;
            rule.range.text = "all";
        } else if (auto range = parse_address_range(text->get(), why)) {
            rule.range = std::move(*range);
        } else {
            reader.report(key, element, describe(element) + ": " + why);
            continue;
        }
        out.push_back({std::move(rule), &element});
    }
}

}  // namespace

void read_access(TableReader& reader, const std::string& label, Diagnostics& diagnostics,
                 LocationConfig& location) {
    std::vector<Read> rules;
    read_list(reader, "allow", true, rules);
    read_list(reader, "deny", false, rules);
    bool ok = true;
    for (size_t i = 0; i < rules.size(); ++i) {
        for (size_t j = 0; j < i; ++j) {
            if (!same_prefix(rules[i].rule, rules[j].rule)) continue;
            const Read& first = rules[j];
            std::string where = (first.rule.allow ? "allow" : "deny") + std::string(" (line ") +
                                std::to_string(first.node->source().begin.line) + ")";
            diagnostics.error(
                rules[i].node->source(),
                label + ": " + (rules[i].rule.allow ? "allow" : "deny") + ": \"" +
                    rules[i].rule.range.text + "\" has the same prefix as \"" +
                    first.rule.range.text + "\" in " + where +
                    (first.rule.allow == rules[i].rule.allow
                         ? ": list it once"
                         : ": an address is judged by its most specific entry, and these two "
                           "are equally specific; keep one"));
            ok = false;
            break;
        }
    }
    if (!ok) return;
    for (Read& read : rules) location.access.push_back(std::move(read.rule));
}

}  // namespace portico::config
