// A JSON writer for the metrics listener's documents (/stats, snapshots,
// compare): appends to one string, no tree in between, so rendering /stats
// for a dashboard every second stays cheap for the master.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace portico::metrics {

class JsonText {
public:
    // Members and elements: a comma before all but the first of each object.
    void open(char bracket) {
        separate();
        out_ += bracket;
        first_ = true;
    }
    void close(char bracket) {
        out_ += bracket;
        first_ = false;
    }
    void key(std::string_view name) {
        separate();
        string(name);
        out_ += ':';
        first_ = true;  // the value that follows takes no comma
    }
    void number(std::string_view digits) {
        separate();
        out_ += digits;
    }
    void number(uint64_t value) { number(std::to_string(value)); }
    void number(int64_t value) { number(std::to_string(value)); }
    // Six significant digits; JSON has no NaN or infinity, so those are null.
    void number(double value);
    void null() { number("null"); }
    void text(std::string_view value) {
        separate();
        string(value);
    }
    void boolean(bool value) { number(value ? "true" : "false"); }

    template <typename T>
    void field(std::string_view name, const T& value) {
        key(name);
        if constexpr (std::is_convertible_v<T, std::string_view>)
            text(value);
        else if constexpr (std::is_same_v<T, bool>)
            boolean(value);
        else
            number(value);
    }
    // An absent value is written as null.
    template <typename T>
    void field(std::string_view name, const std::optional<T>& value) {
        if (value)
            field(name, *value);
        else {
            key(name);
            null();
        }
    }

    std::string take() { return std::move(out_); }

private:
    void separate() {
        if (!first_) out_ += ',';
        first_ = false;
    }
    void string(std::string_view value);

    std::string out_;
    bool first_ = true;
};

}  // namespace portico::metrics
