// Limits and access control, to the keys of the spec's "Limits and access
// control": limit_req_zone / limit_req ([limit.NAME], limit = [...]),
// limit_conn_zone / limit_conn (max_concurrent), allow / deny, auth_basic.
#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "config/address_range.hpp"
#include "convert/conversion.hpp"
#include "convert/nginx_values.hpp"
#include "convert/toml_text.hpp"

namespace portico::convert {

namespace {

bool has_flag(const Directive& directive, const std::string& flag) {
    return std::find(directive.args.begin(), directive.args.end(), flag) != directive.args.end();
}

// nginx keys by $binary_remote_addr to save memory; portico's key is text.
std::string key_template(const std::string& key) {
    return key == "$binary_remote_addr" ? "$remote_addr" : key;
}

const Directive* zone_named(Conversion& conversion, const std::string& kind,
                            const std::string& name) {
    for (const Directive* zone : conversion.limit_zones) {
        if (zone->name == kind && named_option(*zone, "zone").starts_with(name + ":")) return zone;
    }
    return nullptr;
}

// Digits only, and few enough for an int: what nginx's ngx_atoi takes.
bool is_number(const std::string& text) {
    return !text.empty() && text.size() <= 9 &&
           std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
}

// nginx's rate: N r/s or N r/m, N above 0.
bool is_rate(const std::string& rate) {
    if (!rate.ends_with("r/s") && !rate.ends_with("r/m")) return false;
    std::string count = rate.substr(0, rate.size() - 3);
    return is_number(count) && std::atoll(count.c_str()) > 0;
}

int status_in(const Scope& scope, const std::string& name) {
    const Directive* status = last_in(scope, name);
    if (!status || status->args.size() != 1) return 503;  // nginx's default
    return std::atoi(status->args[0].c_str());
}

void limit_requests(Conversion& conversion, const Scope& scope, Table& location) {
    auto found = scope.find("limit_req");
    if (found == scope.end() || found->second.empty()) return;
    std::vector<std::string> names;
    for (const Directive* directive : found->second) {
        std::string name = named_option(*directive, "zone");
        const Directive* zone = zone_named(conversion, "limit_req_zone", name);
        if (!zone) {
            conversion.refuse(*directive, "no limit_req_zone " + name);
            continue;
        }
        std::string size = named_option(*zone, "zone").substr(name.size() + 1);
        std::string rate = named_option(*zone, "rate");
        std::optional<unsigned long long> bytes = nginx_size(size);
        if (zone->args.empty() || !bytes || !is_rate(rate)) {
            conversion.refuse(*zone, "expects a key, zone=NAME:SIZE and rate=Nr/s or Nr/m");
            continue;
        }
        if (std::string why = template_refusal(key_template(zone->args[0])); !why.empty()) {
            conversion.refuse(*zone, why);
            continue;
        }
        std::string burst = named_option(*directive, "burst");
        if (burst.empty()) burst = "0";
        std::string delay =
            has_flag(*directive, "nodelay") ? burst : named_option(*directive, "delay");
        if (delay.empty()) delay = "0";
        if (!is_number(burst) || !is_number(delay)) {
            conversion.refuse(*directive, "burst= and delay= take a number");
            continue;
        }
        // nginx passes the whole burst at once when delay is above it;
        // portico calls that a config error.
        if (std::atoll(delay.c_str()) > std::atoll(burst.c_str())) delay = burst;
        Table table;
        table.comments.push_back(Conversion::origin(*zone));
        table.entries.set("key", toml_string(key_template(zone->args[0])));
        table.entries.set("rate", toml_string(rate));
        table.entries.set("burst", burst);
        table.entries.set("delay", delay);
        table.entries.set("status", std::to_string(status_in(scope, "limit_req_status")));
        // portico's smallest zone keeps more keys than nginx's, never fewer.
        table.entries.set("zone_size", std::to_string(std::max<unsigned long long>(*bytes, 65536)));
        // burst, delay and status are the limit's in portico, the
        // location's in nginx: every location using a zone must agree.
        auto existing = std::find_if(conversion.out.limits.begin(), conversion.out.limits.end(),
                                     [&](const auto& limit) { return limit.first == name; });
        if (existing == conversion.out.limits.end()) {
            conversion.out.limits.emplace_back(name, std::move(table));
        } else if (existing->second.entries.items != table.entries.items) {
            conversion.refuse(*directive,
                              "portico's burst, delay and status belong to the limit: "
                              "another location uses zone " +
                                  name + " otherwise");
            continue;
        }
        names.push_back(name);
    }
    if (!names.empty()) location.entries.set("limit", toml_string_array(names));
}

void limit_connections(Conversion& conversion, const Scope& scope, Table& location) {
    auto found = scope.find("limit_conn");
    if (found == scope.end() || found->second.empty()) return;
    const Directive& directive = *found->second.front();
    if (found->second.size() > 1)
        conversion.refuse(*found->second[1], "portico has one max_concurrent per location");
    if (directive.args.size() != 2 || !is_number(directive.args[1]) ||
        std::atoll(directive.args[1].c_str()) < 1)
        return conversion.refuse(directive, "expects a zone and a count of 1 or more");
    const Directive* zone = zone_named(conversion, "limit_conn_zone", directive.args[0]);
    if (!zone || zone->args.empty())
        return conversion.refuse(directive, "no limit_conn_zone " + directive.args[0]);
    if (std::string why = template_refusal(key_template(zone->args[0])); !why.empty())
        return conversion.refuse(*zone, why);
    location.entries.set(
        "max_concurrent",
        toml_inline_table({{"key", toml_string(key_template(zone->args[0]))},
                           {"count", directive.args[1]},
                           {"status", std::to_string(status_in(scope, "limit_conn_status"))}}));
}

bool contains(const config::AddressRange& outer, const config::AddressRange& inner) {
    if (outer.family != inner.family || outer.prefix_length > inner.prefix_length) return false;
    for (int bit = 0; bit < outer.prefix_length; ++bit) {
        int mask = 0x80 >> (bit % 8);
        if ((outer.bytes[bit / 8] & mask) != (inner.bytes[bit / 8] & mask)) return false;
    }
    return true;
}

// nginx tries allow/deny in order, portico by the most specific entry: the
// same answer, unless an earlier rule covers a later one (dead in nginx,
// alive in portico), which is refused rather than changed.
void access_rules(Conversion& conversion, const Scope& scope, Table& location) {
    auto found = scope.find("allow_deny");
    if (found == scope.end() || found->second.empty()) return;
    struct Seen {
        bool all;
        config::AddressRange range;
        const Directive* directive;
    };
    std::vector<Seen> seen;
    std::vector<std::string> allow, deny;
    for (const Directive* directive : found->second) {
        if (directive->args.size() != 1) {
            conversion.refuse(*directive, "expects one address, range or all");
            continue;
        }
        const std::string& text = directive->args[0];
        Seen rule{text == "all", {}, directive};
        if (!rule.all) {
            std::string why;
            std::optional<config::AddressRange> range = config::parse_address_range(text, why);
            if (!range) {
                conversion.refuse(*directive, why);
                continue;
            }
            rule.range = *range;
        }
        auto covers = [&](const Seen& earlier) {
            return earlier.all || (!rule.all && contains(earlier.range, rule.range));
        };
        auto earlier = std::find_if(seen.begin(), seen.end(), covers);
        if (earlier != seen.end()) {
            conversion.refuse(*directive, "never applies in nginx (" + earlier->directive->text() +
                                              " comes first and covers it); portico would apply "
                                              "it: remove it or reorder");
            continue;
        }
        seen.push_back(rule);
        (directive->name == "allow" ? allow : deny).push_back(text);
    }
    if (!allow.empty()) location.entries.set("allow", toml_string_array(allow));
    if (!deny.empty()) location.entries.set("deny", toml_string_array(deny));
}

void basic_auth(Conversion& conversion, const Scope& scope, Table& location) {
    const Directive* realm = last_in(scope, "auth_basic");
    if (!realm || realm->args == std::vector<std::string>{"off"}) return;
    const Directive* file = last_in(scope, "auth_basic_user_file");
    if (realm->args.size() != 1 || !file || file->args.size() != 1)
        return conversion.refuse(*realm, "needs a realm and auth_basic_user_file");
    if (realm->args[0].find('$') != std::string::npos ||
        file->args[0].find('$') != std::string::npos)
        return conversion.refuse(*realm, "portico's realm and htpasswd file are literal");
    location.entries.set(
        "auth", toml_inline_table({{"realm", toml_string(realm->args[0])},
                                   {"htpasswd", toml_string(conversion.absolute(file->args[0]))}}));
}

}  // namespace

void translate_access(Conversion& conversion, const Scope& scope, Table& location) {
    limit_requests(conversion, scope, location);
    limit_connections(conversion, scope, location);
    access_rules(conversion, scope, location);
    basic_auth(conversion, scope, location);
}

}  // namespace portico::convert
