#include "convert/toml_text.hpp"

#include <cstdio>

namespace portico::convert {

std::string toml_string(std::string_view text) {
    std::string out = "\"";
    for (char c : text) {
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\t':
            out += "\\t";
            break;
        case '\r':
            out += "\\r";
            break;
        default:
            if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
                char escaped[8];
                std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
                out += escaped;
            } else {
                out += c;
            }
        }
    }
    return out + "\"";
}

std::string toml_literal(std::string_view text) {
    for (char c : text) {
        if (c == '\'' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
            return toml_string(text);
    }
    return "'" + std::string(text) + "'";
}

std::string toml_key(std::string_view name) {
    bool bare = !name.empty();
    for (char c : name) {
        bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '_' || c == '-';
        bare = bare && allowed;
    }
    return bare ? std::string(name) : toml_string(name);
}

std::string toml_string_array(const std::vector<std::string>& texts) {
    std::string out = "[";
    for (size_t i = 0; i < texts.size(); ++i) out += (i ? ", " : "") + toml_string(texts[i]);
    return out + "]";
}

std::string toml_inline_table(const std::vector<std::pair<std::string, std::string>>& entries) {
    std::string out = "{ ";
    for (size_t i = 0; i < entries.size(); ++i) {
        out += (i ? ", " : "") + toml_key(entries[i].first) + " = " + entries[i].second;
    }
    return out + " }";
}

}  // namespace portico::convert
