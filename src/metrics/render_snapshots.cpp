// The A/B snapshots as JSON: the list, a save, and a comparison.
#include <ctime>

#include "metrics/json_text.hpp"
#include "metrics/render.hpp"

namespace portico::metrics {

namespace {

std::string utc_text(int64_t unix_ms) {
    time_t seconds = static_cast<time_t>(unix_ms / 1000);
    tm utc{};
    gmtime_r(&seconds, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return text;
}

void summary(JsonText& json, const SavedSnapshot& snapshot) {
    json.open('{');
    json.field("name", snapshot.name);
    json.field("taken_at", utc_text(snapshot.taken_unix_ms));
    json.field("seconds", static_cast<double>(snapshot.counted_ns) / 1e9);
    json.field("requests", all_locations(snapshot.counters).requests());
    json.close('}');
}

std::string_view unit_name(MeasureUnit unit) {
    switch (unit) {
    case MeasureUnit::count:
        return "count";
    case MeasureUnit::per_second:
        return "per_second";
    case MeasureUnit::seconds:
        return "seconds";
    }
    return "";
}

void figures(JsonText& json, std::string_view name, const RunFigures& figures) {
    json.key(name);
    json.open('{');
    for (size_t i = 0; i < compared_measures.size(); ++i)
        json.field(compared_measures[i].key, figures[i]);
    json.close('}');
}

void row(JsonText& json, const LocationComparison& location) {
    json.open('{');
    json.field("name", location.name);
    figures(json, "a", location.a);
    figures(json, "b", location.b);
    RunFigures ratios{};
    for (size_t i = 0; i < compared_measures.size(); ++i)
        ratios[i] = ratio(location.a[i], location.b[i]);
    figures(json, "ratio", ratios);
    json.close('}');
}

}  // namespace

std::string render_snapshot_list_json(const SavedSnapshots& snapshots) {
    JsonText json;
    json.open('{');
    json.field("capacity", uint64_t{SavedSnapshots::capacity});
    json.key("snapshots");
    json.open('[');
    for (const SavedSnapshot& snapshot : snapshots.all()) summary(json, snapshot);
    json.close(']');
    json.close('}');
    return json.take();
}

std::string render_snapshot_saved_json(const SavedSnapshots::Saved& saved) {
    JsonText json;
    json.open('{');
    json.key("saved");
    summary(json, saved.snapshot);
    json.field("replaced", saved.replaced);
    json.field("dropped", saved.dropped);
    json.close('}');
    return json.take();
}

std::string render_compare_json(const Comparison& comparison) {
    JsonText json;
    json.open('{');
    json.key("a");
    summary(json, *comparison.a);
    json.key("b");
    summary(json, *comparison.b);
    json.key("measures");
    json.open('[');
    for (const MeasureInfo& measure : compared_measures) {
        json.open('{');
        json.field("key", measure.key);
        json.field("label", measure.label);
        json.field("unit", unit_name(measure.unit));
        json.close('}');
    }
    json.close(']');
    json.key("locations");
    json.open('[');
    for (const LocationComparison& location : comparison.locations) row(json, location);
    json.close(']');
    json.key("total");
    row(json, comparison.total);
    json.close('}');
    return json.take();
}

}  // namespace portico::metrics
