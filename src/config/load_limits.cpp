// [limit.NAME] tables and a location's `limit` and `max_concurrent`
// (access/rate_limit.hpp, access/concurrency_limit.hpp).
#include <algorithm>
#include <charconv>

#include "config/sections.hpp"

namespace portico::config {

namespace {

// Above this a limit is no limit, and the bucket arithmetic stays far from
// overflowing.
constexpr uint64_t max_rate_per_second = 1'000'000;

// "10r/s" or "600r/m", as nginx writes them: requests per second x 1000
// (nginx's own unit: "30r/m" is 500).
bool parse_rate(std::string_view text, uint64_t& rate_milli) {
    uint64_t count = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), count);
    if (error != std::errc() || end == text.data() || count == 0 || count > max_rate_per_second)
        return false;
    std::string_view unit(end, static_cast<size_t>(text.data() + text.size() - end));
    if (unit == "r/s") {
        rate_milli = count * 1000;
        return true;
    }
    if (unit == "r/m" && count * 1000 / 60 > 0) {
        rate_milli = count * 1000 / 60;
        return true;
    }
    return false;
}

// A token, as nginx's zone names are in practice: what a location's `limit`
// list, the logs and the error messages quote as they are.
bool is_limit_name(std::string_view name) {
    return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '-';
    });
}

// nginx's limit_req_status and limit_conn_status take 400 to 599.
void read_refusal_status(TableReader& reader, int& status) {
    int64_t value = status;
    if (const toml::node* node = reader.get("status")) {
        if (!node->is_integer() || (value = **node->as_integer()) < 400 || value > 599) {
            reader.wrong("status", "a status from 400 to 599 (429 unless set)");
            return;
        }
        status = static_cast<int>(value);
    }
}

bool read_key(TableReader& reader, Diagnostics& diagnostics, Template& key) {
    const toml::node* node = reader.get("key");
    if (node == nullptr) {
        diagnostics.error(reader.table().source(),
                          reader.field("key") + ": missing (a template, like \"$remote_addr\")");
        return false;
    }
    if (!read_template(*node, reader.field("key"), CaptureScope{}, diagnostics, key)) return false;
    if (key.source.empty()) {
        reader.wrong("key", "a template that names the client, like \"$remote_addr\"");
        return false;
    }
    return true;
}

void read_limit_zone(const std::string& name, const toml::table& table, LoadContext& context,
                     LimitConfig& limit) {
    std::string label = "limit." + name;
    TableReader reader(table, label + ".", "[" + label + "]", context.diagnostics);
    limit.name = name;
    limit.where = position_of(table.source());
    read_key(reader, context.diagnostics, limit.key);
    std::string rate;
    if (!reader.read_string("rate", rate)) {
        if (reader.get("rate") == nullptr)
            context.diagnostics.error(table.source(),
                                      label + ".rate: missing (like \"10r/s\" or \"600r/m\")");
    } else if (!parse_rate(rate, limit.rate_milli)) {
        reader.wrong("rate", "requests per second or minute above 0, like \"10r/s\" or "
                             "\"600r/m\" (at most 1000000r/s)");
    }
    for (auto [key, field] : {std::pair{"burst", &limit.burst}, std::pair{"delay", &limit.delay}}) {
        const toml::node* node = reader.get(key);
        if (node == nullptr) continue;
        int64_t value = node->is_integer() ? **node->as_integer() : -1;
        if (value < 0 || value > 1'000'000)
            reader.wrong(key, "a count of requests from 0 to 1000000");
        else *field = static_cast<uint32_t>(value);
    }
    if (limit.delay > limit.burst && reader.get("delay") != nullptr)
        reader.report("delay", *reader.get("delay"),
                      "is more than burst: delay counts the requests of the burst that pass at "
                      "once (nginx's nodelay is delay = burst)");
    read_refusal_status(reader, limit.status);
    reader.read_size("zone_size", limit.zone_bytes, 64 * 1024, uint64_t{1} << 34);
    reader.finish();
}

}  // namespace

void read_limit_zones(const toml::node& node, LoadContext& context,
                      std::vector<LimitConfig>& limits) {
    const toml::table* table = expect_table(node, "limit", context);
    if (!table) return;
    for (const auto& [key, value] : entries_in_file_order(*table)) {
        std::string name(key->str());
        if (!is_limit_name(name)) {
            context.diagnostics.error(key->source(),
                                      "limit: \"" + name +
                                          "\" is not a limit's name: letters, digits, '_' and "
                                          "'-' only (a location's limit = [...] names it)");
            continue;
        }
        const toml::table* limit_table = value->as_table();
        if (!limit_table) {
            context.diagnostics.error(key->source(), "limit." + name + ": expected a table [limit." +
                                                         name + "] with key and rate, got " +
                                                         describe(*value));
            continue;
        }
        read_limit_zone(name, *limit_table, context, limits.emplace_back());
    }
}

void read_limits(TableReader& reader, const std::string& label, LoadContext& context,
                 LocationConfig& location) {
    if (const toml::node* node = reader.get("limit")) {
        const toml::array* names = node->as_array();
        if (names == nullptr) {
            reader.wrong("limit", "a list of [limit.NAME] names, like [\"per_ip\"]");
        } else {
            for (const toml::node& entry : *names) {
                const auto* name = entry.as_string();
                const std::vector<LimitConfig>& limits = *context.limits;
                size_t index = limits.size();
                for (size_t i = 0; name != nullptr && i < limits.size(); ++i)
                    if (limits[i].name == name->get()) index = i;
                if (index == limits.size()) {
                    context.diagnostics.error(
                        entry.source(), label + ": limit: " + describe(entry) +
                                            " is not a [limit.NAME] table of this file");
                } else if (std::find(location.limits.begin(), location.limits.end(), index) !=
                           location.limits.end()) {
                    context.diagnostics.error(entry.source(), label + ": limit: \"" +
                                                                  limits[index].name +
                                                                  "\" is listed twice");
                } else {
                    location.limits.push_back(index);
                }
            }
        }
    }
    if (const toml::node* node = reader.get("max_concurrent")) {
        const toml::table* table = node->as_table();
        if (table == nullptr) {
            reader.wrong("max_concurrent", "a table like { key = \"$remote_addr\", count = 10 }");
            return;
        }
        TableReader limit(*table, label + ": max_concurrent.", label + "'s max_concurrent",
                          context.diagnostics);
        ConcurrencyLimitConfig& config = location.max_concurrent.emplace();
        bool ok = read_key(limit, context.diagnostics, config.key);
        const toml::node* count = limit.get("count");
        int64_t value = count != nullptr && count->is_integer() ? **count->as_integer() : 0;
        if (count == nullptr) {
            context.diagnostics.error(table->source(), label + ": max_concurrent.count: missing");
            ok = false;
        } else if (value < 1 || value > 1'000'000) {
            limit.wrong("count", "a count of requests from 1 to 1000000");
            ok = false;
        }
        config.count = static_cast<uint32_t>(value);
        read_refusal_status(limit, config.status);
        limit.finish();
        if (!ok) location.max_concurrent.reset();
    }
}

}  // namespace portico::config
