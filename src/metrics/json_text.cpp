#include "metrics/json_text.hpp"

#include <cmath>
#include <cstdio>

namespace portico::metrics {

void JsonText::number(double value) {
    if (!std::isfinite(value)) {
        null();
        return;
    }
    char digits[32];
    std::snprintf(digits, sizeof digits, "%.6g", value);
    number(std::string_view(digits));
}

void JsonText::string(std::string_view value) {
    out_ += '"';
    for (char c : value) {
        if (c == '"' || c == '\\') {
            out_ += '\\';
            out_ += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            char escaped[8];
            std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
            out_ += escaped;
        } else {
            out_ += c;
        }
    }
    out_ += '"';
}

}  // namespace portico::metrics
