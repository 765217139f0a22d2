// Tables and numbers for a terminal, shared by `portico stats` and
// `portico stats --compare`.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace portico::cli {

// Columns padded to their widest cell, two spaces apart: the leading name
// columns left-aligned, the numbers right-aligned so digits line up. Widths
// count bytes, so cells stay ASCII.
class Table {
public:
    explicit Table(size_t name_columns = 1) : name_columns_(name_columns) {}
    void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
    std::string render() const;

private:
    size_t name_columns_;
    std::vector<std::vector<std::string>> rows_;
};

// One double through a printf format: printf_string("%.1f", 2.25) is "2.2".
std::string printf_string(const char* format, double value);

// A rate: one decimal below 100 ("12.5"), none from there ("1800").
std::string per_second_text(double per_second);

// Milliseconds with two or three significant decimals: 0.087, 4.56, 45.6, 456.
std::string milliseconds(double seconds);

}  // namespace portico::cli
