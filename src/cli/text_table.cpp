#include "cli/text_table.hpp"

#include <algorithm>
#include <cstdio>

namespace portico::cli {

std::string Table::render() const {
    std::vector<size_t> widths;
    for (const auto& row : rows_) {
        widths.resize(std::max(widths.size(), row.size()), 0);
        for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
    }
    std::string out;
    for (const auto& row : rows_) {
        std::string line;
        for (size_t i = 0; i < row.size(); ++i) {
            if (i > 0) line += "  ";
            std::string padding(widths[i] - row[i].size(), ' ');
            line += i < name_columns_ ? row[i] + padding : padding + row[i];
        }
        line.erase(line.find_last_not_of(' ') + 1);
        out += line;
        out += '\n';
    }
    return out;
}

std::string printf_string(const char* format, double value) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, format, value);
    return buffer;
}

std::string per_second_text(double per_second) {
    return printf_string(per_second < 100.0 ? "%.1f" : "%.0f", per_second);
}

std::string milliseconds(double seconds) {
    double ms = seconds * 1000.0;
    if (ms < 1.0) return printf_string("%.3f", ms);
    if (ms < 10.0) return printf_string("%.2f", ms);
    if (ms < 100.0) return printf_string("%.1f", ms);
    return printf_string("%.0f", ms);
}

}  // namespace portico::cli
