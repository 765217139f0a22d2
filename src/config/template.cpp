#include "config/template.hpp"

#include <algorithm>
#include <array>

namespace portico::config {

namespace {

constexpr std::array<std::pair<std::string_view, Variable>, 10> plain_variables{{
    {"host", Variable::host},
    {"server_name", Variable::server_name},
    {"server_port", Variable::server_port},
    {"scheme", Variable::scheme},
    {"request_uri", Variable::request_uri},
    {"uri", Variable::uri},
    {"args", Variable::args},
    {"remote_addr", Variable::remote_addr},
    {"request_id", Variable::request_id},
    {"query_string", Variable::args},  // nginx's other name for $args
}};

bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

char lower(char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

void append_text(Template& out, std::string_view text) {
    if (text.empty()) return;
    if (!out.parts.empty() && out.parts.back().variable == Variable::text) {
        out.parts.back().text += text;
    } else {
        out.parts.push_back({Variable::text, std::string(text), -1});
    }
}

// The part `name` stands for, or false with a message.
bool resolve(std::string_view name, const CaptureScope& scope, TemplatePart& part,
             std::string& message) {
    if (name[0] >= '0' && name[0] <= '9') {
        int group = 0;
        for (char c : name) {
            if (c < '0' || c > '9') {
                message = "'$" + std::string(name) + "' is not a variable name";
                return false;
            }
            group = group * 10 + (c - '0');
            if (group > 99) break;
        }
        if (group > scope.groups) {
            message = "'$" + std::string(name) + "': " +
                      (scope.groups == 0
                           ? std::string("no regex with groups applies here")
                           : "the regex has only " + std::to_string(scope.groups) + " group(s)");
            return false;
        }
        part = {Variable::capture, {}, group};
        return true;
    }
    for (const auto& [text, variable] : plain_variables) {
        if (name == text) {
            part = {variable, {}, -1};
            return true;
        }
    }
    for (const auto& [group_name, group] : scope.names) {
        if (name == group_name) {
            part = {Variable::capture, {}, group};
            return true;
        }
    }
    auto suffix_after = [&](std::string_view prefix, Variable variable, bool header) {
        if (!name.starts_with(prefix) || name.size() == prefix.size()) return false;
        std::string text;
        for (char c : name.substr(prefix.size())) text += header ? (c == '_' ? '-' : lower(c)) : c;
        part = {variable, std::move(text), -1};
        return true;
    };
    if (suffix_after("http_", Variable::http, true) ||
        suffix_after("cookie_", Variable::cookie, false)) {
        return true;
    }
    message = "unknown variable '$" + std::string(name) +
              "' (known: $host, $server_name, $server_port, $scheme, $request_uri, $uri, $args, "
              "$remote_addr, $request_id, $http_NAME, $cookie_NAME, and the captures of a regex)";
    return false;
}

}  // namespace

bool Template::uses(Variable variable) const {
    return std::any_of(parts.begin(), parts.end(),
                       [variable](const TemplatePart& part) { return part.variable == variable; });
}

bool compile_template(std::string_view text, const CaptureScope& scope, Template& out,
                      TemplateError& error) {
    out.source = std::string(text);
    out.parts.clear();
    size_t literal_start = 0;
    size_t at = 0;
    while ((at = text.find('$', at)) != std::string_view::npos) {
        append_text(out, text.substr(literal_start, at - literal_start));
        size_t name_start = at + 1;
        size_t name_end = name_start;
        bool braced = name_start < text.size() && text[name_start] == '{';
        if (braced) {
            name_end = text.find('}', ++name_start);
            if (name_end == std::string_view::npos) {
                error = {at, "'${' without a closing '}'"};
                return false;
            }
        } else if (name_end < text.size() && text[name_end] >= '0' && text[name_end] <= '9') {
            ++name_end;  // $1 is one digit, as in nginx: "$10" is $1 then "0"
        } else {
            while (name_end < text.size() && is_name_char(text[name_end])) ++name_end;
        }
        std::string_view name = text.substr(name_start, name_end - name_start);
        if (name.empty()) {
            error = {at, "a '$' must start a variable name ($host, ${host}, $1...)"};
            return false;
        }
        TemplatePart part;
        if (!resolve(name, scope, part, error.message)) {
            error.offset = at;
            return false;
        }
        out.parts.push_back(std::move(part));
        at = literal_start = name_end + (braced ? 1 : 0);
    }
    append_text(out, text.substr(literal_start));
    return true;
}

}  // namespace portico::config
