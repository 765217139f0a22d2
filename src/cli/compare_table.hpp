// `portico stats --compare A B`: GET /stats/compare as a table, one block
// of rows per location (one row per measure: A, B and B / A), then the
// total. The figures are the document's; only their printing is done here.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

namespace portico::cli {

// Never throws on a document with missing or odd fields: they print as "-".
std::string render_compare_table(const nlohmann::json& comparison);

}  // namespace portico::cli
