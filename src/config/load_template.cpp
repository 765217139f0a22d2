// Template values: compiled here, once, so a bad variable is a `-t` error
// at its line and column and a request never parses one.
#include <re2/re2.h>

#include "config/sections.hpp"

namespace portico::config {

bool read_template(const toml::node& node, std::string_view field, const CaptureScope& scope,
                   Diagnostics& diagnostics, Template& out) {
    const auto* text = node.as_string();
    if (!text) {
        diagnostics.error(node.source(),
                          std::string(field) + ": expected a string, got " + describe(node));
        return false;
    }
    TemplateError error;
    if (compile_template(text->get(), scope, out, error)) return true;
    SourcePosition where = position_of(node.source());
    // The variable's own column, when the string is on one line (the opening
    // quote is the node's column).
    if (text->get().find('\n') == std::string::npos)
        where.column += static_cast<uint32_t>(error.offset) + 1;
    diagnostics.error(where, std::string(field) + ": " + error.message);
    return false;
}

CaptureScope capture_scope(const std::string& pattern) {
    CaptureScope scope;
    re2::RE2 compiled(pattern, re2::RE2::Quiet);
    if (!compiled.ok()) return scope;
    scope.groups = compiled.NumberOfCapturingGroups();
    for (const auto& [name, group] : compiled.NamedCapturingGroups())
        scope.names.emplace_back(name, group);
    return scope;
}

}  // namespace portico::config
