// Internal to the config loader: reads the keys of one TOML table into typed
// fields and reports every wrong key or value with its line and column, so a
// single run of `portico -t` lists all the problems of a file.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <toml++/toml.h>

#include "config/config.hpp"
#include "config/units.hpp"

namespace portico::config {

SourcePosition position_of(const toml::source_region& region);

// Every problem found in one file.
class Diagnostics {
public:
    explicit Diagnostics(std::string file) : file_(std::move(file)) {}

    void error(const toml::source_region& where, std::string message);
    void error(SourcePosition where, std::string message);
    bool empty() const { return errors_.empty(); }
    // In file order: the order the operator will fix them in.
    std::vector<ConfigError> take_sorted();

private:
    std::string file_;
    std::vector<ConfigError> errors_;
};

// A value as the operator wrote it, for "got ..." in messages.
std::string describe(const toml::node& value);

// The entries of a table in file order (toml::table is ordered by key).
std::vector<std::pair<const toml::key*, const toml::node*>> entries_in_file_order(
    const toml::table& table);

// Reads one table. Each read names a key the table may hold; finish() then
// reports every other key as unknown. A missing key leaves the field at its
// default; a wrong one is reported and also leaves the default.
class TableReader {
public:
    // `field_prefix` starts value messages ("server." gives
    // "server.workers: ..."); `label` names the table in "unknown key 'x' in
    // [server]".
    TableReader(const toml::table& table, std::string field_prefix, std::string label,
                Diagnostics& diagnostics);

    // The node for `key`, or nullptr; marks the key as known.
    const toml::node* get(std::string_view key);
    const toml::table& table() const { return table_; }
    // "server.workers": for messages about a key that read() did not cover.
    std::string field(std::string_view key) const { return field_prefix_ + std::string(key); }

    // "server.workers: PROBLEM" at the value's position.
    void report(std::string_view key, const toml::node& value, std::string_view problem);
    // "server.workers: expected ..., got ..." at the value's position.
    void wrong(std::string_view key, const toml::node& value, std::string_view expected);
    // The same for a key that is present.
    void wrong(std::string_view key, std::string_view expected) { wrong(key, *get(key), expected); }

    bool read_string(std::string_view key, std::string& out);
    bool read_bool(std::string_view key, bool& out);
    bool read_duration(std::string_view key, Duration& out, Duration min = Duration::zero());
    bool read_size(std::string_view key, uint64_t& out, uint64_t min, uint64_t max);
    bool read_string_array(std::string_view key, std::vector<std::string>& out);
    // "host:port"; a host name as `host_names` says.
    bool read_address(std::string_view key, SocketAddress& out, HostNames host_names);
    // A non-empty array of "host:port"; with a `unix_folder`, also
    // "unix:PATH" (a Unix socket, a relative PATH taken from that folder).
    bool read_addresses(std::string_view key, std::vector<SocketAddress>& out, HostNames host_names,
                        std::string_view unix_folder = {});

    // Reports a missing required key at the table's position.
    bool require(std::string_view key, std::string_view example);

    // read_integer into a narrower field, whose range [min, max] must fit it.
    template <typename Integer>
    bool read_bounded(std::string_view key, Integer& out, Integer min, Integer max) {
        int64_t value = 0;
        if (!read_integer(key, value, static_cast<int64_t>(min), static_cast<int64_t>(max))) {
            return false;
        }
        out = static_cast<Integer>(value);
        return true;
    }

    // One of a fixed set of words, like level = "info".
    template <typename Enum>
    bool read_choice(std::string_view key, Enum& out,
                     std::initializer_list<std::pair<std::string_view, Enum>> choices) {
        const toml::node* value = get(key);
        if (!value) {
            return false;
        }
        if (const auto* text = value->as_string()) {
            for (const auto& [word, choice] : choices) {
                if (text->get() == word) {
                    out = choice;
                    return true;
                }
            }
        }
        std::string expected = "one of";
        for (const auto& choice : choices) {
            expected +=
                (&choice == choices.begin() ? " \"" : ", \"") + std::string(choice.first) + "\"";
        }
        wrong(key, *value, expected);
        return false;
    }

    // Reports the keys no read asked for, with a suggestion when one is close.
    void finish();

private:
    bool read_integer(std::string_view key, int64_t& out, int64_t min, int64_t max);
    std::optional<SocketAddress> address_from(std::string_view key, const toml::node& value,
                                              HostNames host_names,
                                              std::string_view unix_folder = {});

    const toml::table& table_;
    std::string field_prefix_;
    std::string label_;
    Diagnostics& diagnostics_;
    std::vector<std::string_view> known_;
};

}  // namespace portico::config
