#include "config/table_reader.hpp"

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "config/units.hpp"

namespace portico::config {

std::string ConfigError::to_string() const {
    // Line 0 means the problem is the file as a whole (it cannot be read).
    if (where.line == 0) {
        return file + ": " + message;
    }
    return file + ":" + std::to_string(where.line) + ":" + std::to_string(where.column) + ": " +
           message;
}

SourcePosition position_of(const toml::source_region& region) {
    return {region.begin.line, region.begin.column};
}

void Diagnostics::error(const toml::source_region& where, std::string message) {
    error(position_of(where), std::move(message));
}

void Diagnostics::error(SourcePosition where, std::string message) {
    errors_.push_back({file_, where, std::move(message)});
}

std::vector<ConfigError> Diagnostics::take_sorted() {
    std::stable_sort(errors_.begin(), errors_.end(), [](const auto& a, const auto& b) {
        return std::pair(a.where.line, a.where.column) < std::pair(b.where.line, b.where.column);
    });
    return std::move(errors_);
}

namespace {

std::string quoted_excerpt(std::string_view text) {
    constexpr size_t max_shown = 60;
    std::string out = "\"";
    for (char c : text.substr(0, max_shown)) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default: out += c;
        }
    }
    out += text.size() > max_shown ? "...\"" : "\"";
    return out;
}

// Levenshtein distance, for "did you mean" on short key names.
size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) {
        row[j] = j;
    }
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
            diagonal = above;
        }
    }
    return row[b.size()];
}

std::string suggestion(std::string_view unknown, const std::vector<std::string_view>& known) {
    constexpr size_t max_typos = 2;
    std::string_view best;
    size_t best_distance = max_typos + 1;
    for (std::string_view candidate : known) {
        size_t distance = edit_distance(unknown, candidate);
        if (distance < best_distance && distance < candidate.size()) {
            best = candidate;
            best_distance = distance;
        }
    }
    return best.empty() ? std::string() : "; did you mean '" + std::string(best) + "'?";
}

}  // namespace

std::string describe(const toml::node& value) {
    if (const auto* text = value.as_string()) {
        return quoted_excerpt(text->get());
    }
    if (const auto* array = value.as_array()) {
        return array->empty() ? "an empty array" : "an array";
    }
    if (value.is_table()) {
        return "a table";
    }
    std::ostringstream out;
    value.visit([&out](const auto& scalar) {
        if constexpr (toml::is_value<decltype(scalar)>) {
            out << scalar;
        }
    });
    return out.str();
}

std::vector<std::pair<const toml::key*, const toml::node*>> entries_in_file_order(
    const toml::table& table) {
    std::vector<std::pair<const toml::key*, const toml::node*>> entries;
    for (const auto& [key, value] : table) {
        entries.emplace_back(&key, &value);
    }
    std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
        auto pa = a.first->source().begin;
        auto pb = b.first->source().begin;
        return std::pair(pa.line, pa.column) < std::pair(pb.line, pb.column);
    });
    return entries;
}

TableReader::TableReader(const toml::table& table, std::string field_prefix, std::string label,
                         Diagnostics& diagnostics)
    : table_(table),
      field_prefix_(std::move(field_prefix)),
      label_(std::move(label)),
      diagnostics_(diagnostics) {}

const toml::node* TableReader::get(std::string_view key) {
    known_.push_back(key);
    return table_.get(key);
}

void TableReader::report(std::string_view key, const toml::node& value, std::string_view problem) {
    diagnostics_.error(value.source(), field(key) + ": " + std::string(problem));
}

void TableReader::wrong(std::string_view key, const toml::node& value, std::string_view expected) {
    report(key, value, "expected " + std::string(expected) + ", got " + describe(value));
}

bool TableReader::read_string(std::string_view key, std::string& out) {
    const toml::node* value = get(key);
    if (!value) {
        return false;
    }
    if (const auto* text = value->as_string()) {
        out = text->get();
        return true;
    }
    wrong(key, *value, "a string");
    return false;
}

bool TableReader::read_bool(std::string_view key, bool& out) {
    const toml::node* value = get(key);
    if (!value) {
        return false;
    }
    if (const auto* flag = value->as_boolean()) {
        out = flag->get();
        return true;
    }
    wrong(key, *value, "true or false");
    return false;
}

bool TableReader::read_integer(std::string_view key, int64_t& out, int64_t min, int64_t max) {
    const toml::node* value = get(key);
    if (!value) {
        return false;
    }
    std::string range = std::to_string(min) + ".." + std::to_string(max);
    const auto* number = value->as_integer();
    if (!number) {
        wrong(key, *value, "an integer " + range);
        return false;
    }
    if (number->get() < min || number->get() > max) {
        wrong(key, *value, "a value in " + range);
        return false;
    }
    out = number->get();
    return true;
}

bool TableReader::read_duration(std::string_view key, Duration& out, Duration min) {
    const toml::node* value = get(key);
    if (!value) {
        return false;
    }
    const auto* text = value->as_string();
    std::optional<Duration> duration = text ? parse_duration(text->get()) : std::nullopt;
    if (!duration) {
        wrong(key, *value, "a duration like \"75s\" or \"250ms\"");
        return false;
    }
    if (*duration < min) {
        wrong(key, *value, "a duration of at least " + std::to_string(min.count()) + "ms");
        return false;
    }
    out = *duration;
    return true;
}

bool TableReader::read_size(std::string_view key, uint64_t& out, uint64_t min, uint64_t max) {
    const toml::node* value = get(key);
    if (!value) {
        return false;
    }
    std::optional<uint64_t> size;
    if (const auto* text = value->as_string()) {
        size = parse_size(text->get());
    } else if (const auto* number = value->as_integer(); number && number->get() >= 0) {
        size = static_cast<uint64_t>(number->get());
    }
    if (!size) {
        wrong(key, *value, "a size like 16384, \"16KiB\" or \"10MiB\"");
        return false;
    }
    if (*size < min || *size > max) {
        wrong(key, *value,
              "a size from " + std::to_string(min) + " to " + std::to_string(max) + " bytes");
        return false;
    }
    out = *size;
    return true;
}

bool TableReader::read_string_array(std::string_view key, std::vector<std::string>& out) {
    const toml::node* value = get(key);
    if (!value) {
        return false;
    }
    const auto* array = value->as_array();
    if (!array) {
        wrong(key, *value, "an array of strings");
        return false;
    }
    std::vector<std::string> strings;
    bool all_strings = true;
    for (const toml::node& element : *array) {
        if (const auto* text = element.as_string()) {
            strings.push_back(text->get());
        } else {
            wrong(key, element, "a string in the array");
            all_strings = false;
        }
    }
    if (all_strings) {
        out = std::move(strings);
    }
    return all_strings;
}

std::optional<SocketAddress> TableReader::address_from(std::string_view key,
                                                       const toml::node& value,
                                                       HostNames host_names,
                                                       std::string_view unix_folder) {
    const auto* text = value.as_string();
    if (!text) {
        wrong(key, value, host_names == HostNames::refused ? "\"IP:port\"" : "\"host:port\"");
        return std::nullopt;
    }
    std::string why;
    constexpr std::string_view unix_scheme = "unix:";
    std::optional<SocketAddress> address;
    if (!unix_folder.empty() && text->get().starts_with(unix_scheme)) {
        // Relative to the config file's folder, like every path in it.
        std::filesystem::path path(text->get().substr(unix_scheme.size()));
        if (path.empty())
            why = "expected \"unix:/path/to/app.sock\"";
        else
            address = unix_socket_address(
                (std::filesystem::path(unix_folder) / path).lexically_normal().string(), why);
    } else {
        address = parse_socket_address(text->get(), host_names, why);
    }
    if (!address) {
        report(key, value, describe(value) + ": " + why);
    }
    return address;
}

bool TableReader::read_address(std::string_view key, SocketAddress& out, HostNames host_names) {
    const toml::node* value = get(key);
    if (!value) {
        return false;
    }
    auto address = address_from(key, *value, host_names);
    if (address) {
        out = std::move(*address);
    }
    return address.has_value();
}

bool TableReader::read_addresses(std::string_view key, std::vector<SocketAddress>& out,
                                 HostNames host_names, std::string_view unix_folder) {
    const toml::node* value = get(key);
    if (!value) {
        return false;
    }
    const auto* array = value->as_array();
    if (!array || array->empty()) {
        wrong(key, *value, "a non-empty array like [\"127.0.0.1:8080\"]");
        return false;
    }
    std::vector<SocketAddress> addresses;
    for (const toml::node& element : *array) {
        if (auto address = address_from(key, element, host_names, unix_folder)) {
            addresses.push_back(std::move(*address));
        }
    }
    bool all_valid = addresses.size() == array->size();
    if (all_valid) {
        out = std::move(addresses);
    }
    return all_valid;
}

bool TableReader::require(std::string_view key, std::string_view example) {
    known_.push_back(key);
    if (table_.contains(key)) {
        return true;
    }
    diagnostics_.error(table_.source(), field(key) + " is required, like " + std::string(example));
    return false;
}

void TableReader::finish() {
    for (const auto& [key, value] : table_) {
        if (std::find(known_.begin(), known_.end(), key.str()) == known_.end()) {
            diagnostics_.error(key.source(), "unknown key '" + std::string(key.str()) + "' in " +
                                                 label_ + suggestion(key.str(), known_));
        }
    }
}

}  // namespace portico::config
