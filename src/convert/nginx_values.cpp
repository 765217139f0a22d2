#include "convert/nginx_values.hpp"

#include <re2/re2.h>

#include "config/template.hpp"

namespace portico::convert {

namespace {

// nginx's ngx_parse_time: numbers each followed by a unit (none: seconds).
std::optional<long long> milliseconds_of(std::string_view text) {
    if (text.empty()) return std::nullopt;
    long long total = 0;
    size_t at = 0;
    while (at < text.size()) {
        long long number = 0;
        size_t digits = 0;
        while (at < text.size() && text[at] >= '0' && text[at] <= '9') {
            number = number * 10 + (text[at++] - '0');
            if (++digits > 12) return std::nullopt;
        }
        if (digits == 0) return std::nullopt;
        long long unit = 1000;
        if (text.substr(at).starts_with("ms")) {
            unit = 1;
            at += 2;
        } else if (at < text.size()) {
            switch (text[at++]) {
            case 's':
                unit = 1000;
                break;
            case 'm':
                unit = 60'000;
                break;
            case 'h':
                unit = 3'600'000;
                break;
            case 'd':
                unit = 86'400'000;
                break;
            case 'w':
                unit = 7 * 86'400'000LL;
                break;
            case 'M':
                unit = 30 * 86'400'000LL;
                break;
            case 'y':
                unit = 365 * 86'400'000LL;
                break;
            default:
                return std::nullopt;
            }
        }
        total += number * unit;
    }
    return total;
}

}  // namespace

std::optional<std::string> portico_duration(std::string_view nginx_time) {
    std::optional<long long> ms = milliseconds_of(nginx_time);
    if (!ms) return std::nullopt;
    if (*ms % 1000 != 0) return std::to_string(*ms) + "ms";
    return std::to_string(*ms / 1000) + "s";
}

std::optional<long long> nginx_seconds(std::string_view nginx_time) {
    std::optional<long long> ms = milliseconds_of(nginx_time);
    if (!ms || *ms % 1000 != 0) return std::nullopt;
    return *ms / 1000;
}

std::optional<unsigned long long> nginx_size(std::string_view text) {
    if (text.empty()) return std::nullopt;
    unsigned long long unit = 1;
    char last = text.back();
    if (last == 'k' || last == 'K') unit = 1024;
    if (last == 'm' || last == 'M') unit = 1024 * 1024;
    if (last == 'g' || last == 'G') unit = 1024ULL * 1024 * 1024;
    if (unit != 1) text.remove_suffix(1);
    if (text.empty() || text.size() > 15) return std::nullopt;
    unsigned long long number = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return std::nullopt;
        number = number * 10 + (c - '0');
    }
    return number * unit;
}

std::string re2_refusal(const std::string& pattern) {
    // RE2 rejects what it cannot run in linear time (lookaround,
    // backreferences, possessive quantifiers, atomic groups), so a pattern
    // it compiles means what PCRE meant, for what nginx configs write.
    RE2::Options options;
    options.set_log_errors(false);
    RE2 regex(pattern, options);
    if (regex.ok()) return "";
    return "the regex uses a PCRE feature RE2 lacks (" + regex.error() + ")";
}

int regex_group_count(const std::string& pattern) {
    RE2::Options options;
    options.set_log_errors(false);
    RE2 regex(pattern, options);
    return regex.ok() ? regex.NumberOfCapturingGroups() : 0;
}

std::string template_refusal(std::string_view value, const std::string& capture_regex) {
    config::CaptureScope scope;
    if (!capture_regex.empty()) {
        RE2::Options options;
        options.set_log_errors(false);
        RE2 regex(capture_regex, options);
        if (regex.ok()) {
            scope.groups = regex.NumberOfCapturingGroups();
            for (const auto& [name, group] : regex.NamedCapturingGroups())
                scope.names.emplace_back(name, group);
        }
    }
    config::Template compiled;
    config::TemplateError error;
    if (config::compile_template(value, scope, compiled, error)) return "";
    return "'" + std::string(value) + "': " + error.message + " (portico has no equivalent)";
}

}  // namespace portico::convert
