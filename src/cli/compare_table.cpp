#include "cli/compare_table.hpp"

#include <nlohmann/json.hpp>

#include "cli/stats_json.hpp"
#include "cli/text_table.hpp"

namespace portico::cli {

namespace {

using nlohmann::json;

// A figure in its measure's unit; null (nothing to say) is "-".
std::string figure(const json& value, const std::string& unit) {
    if (!value.is_number()) return "-";
    double number = value.get<double>();
    if (unit == "seconds") return milliseconds(number);
    if (unit == "per_second") return per_second_text(number);
    return printf_string("%.0f", number);
}

std::string ratio(const json& value) {
    return value.is_number() ? printf_string("%.2fx", value.get<double>()) : "-";
}

std::string run_line(const char* label, const json& run) {
    return std::string(label) + "  " + text_at(run, "name") + "  taken " +
           text_at(run, "taken_at") + ", " + std::to_string(count_at(run, "requests")) +
           " requests in " + printf_string("%.1f", number_at(run, "seconds")) +
           " s since the reset (or start)\n";
}

void add_location(Table& table, const json& row, const json& measures) {
    std::string name = text_at(row, "name");
    for (const json& measure : measures) {
        std::string key = text_at(measure, "key");
        std::string unit = text_at(measure, "unit");
        std::string label = text_at(measure, "label") + (unit == "seconds" ? " ms" : "");
        table.add({name, label, figure(member(member(row, "a"), key.c_str()), unit),
                   figure(member(member(row, "b"), key.c_str()), unit),
                   ratio(member(member(row, "ratio"), key.c_str()))});
        name.clear();  // the name on the block's first row only
    }
}

}  // namespace

std::string render_compare_table(const json& comparison) {
    const json& a = member(comparison, "a");
    const json& b = member(comparison, "b");
    const json& measures = member(comparison, "measures");
    std::string out = run_line("A", a) + run_line("B", b) + "\n";
    if (!measures.is_array()) return out;
    std::string a_name = text_at(a, "name"), b_name = text_at(b, "name");
    Table table(2);
    table.add({"location", "measure", a_name, b_name, b_name + "/" + a_name});
    const json& locations = member(comparison, "locations");
    if (locations.is_array())
        for (const json& row : locations) add_location(table, row, measures);
    add_location(table, member(comparison, "total"), measures);
    out += table.render();
    out +=
        "req/s: requests over the time from the reset to the snapshot; ratio: B / A "
        "(\"-\" where a side has nothing to measure or A is 0)\n";
    return out;
}

}  // namespace portico::cli
