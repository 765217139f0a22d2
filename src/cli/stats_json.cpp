#include "cli/stats_json.hpp"

#include <algorithm>

namespace portico::cli {

using nlohmann::json;

const json& member(const json& object, const char* key) {
    static const json null;
    if (!object.is_object()) return null;
    auto found = object.find(key);
    return found == object.end() ? null : *found;
}

uint64_t count_of(const json& value) {
    if (value.is_number_unsigned()) return value.get<uint64_t>();
    if (value.is_number_integer())
        return static_cast<uint64_t>(std::max<int64_t>(0, value.get<int64_t>()));
    if (value.is_number_float()) return static_cast<uint64_t>(std::max(0.0, value.get<double>()));
    return 0;
}

uint64_t count_at(const json& object, const char* key) {
    return count_of(member(object, key));
}

double number_at(const json& object, const char* key) {
    const json& value = member(object, key);
    return value.is_number() ? value.get<double>() : 0.0;
}

std::string text_at(const json& object, const char* key) {
    const json& value = member(object, key);
    return value.is_string() ? value.get<std::string>() : std::string();
}

}  // namespace portico::cli
