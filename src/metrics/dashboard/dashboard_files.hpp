// The dashboard served at GET / on the metrics listener: the files of this
// folder (index.html, the scripts, the styles), compiled into the binary at
// build time (cmake/embed_dashboard.cmake), so the page is edited as real
// files and yet needs nothing installed beside portico, and loads nothing
// from anywhere but the listener itself.
#pragma once

#include <cstddef>
#include <string_view>

namespace portico::metrics {

struct DashboardFile {
    std::string_view name;  // "index.html", "dashboard.js"
    std::string_view body;
};

// Defined in the generated source.
extern const DashboardFile dashboard_files[];
extern const size_t dashboard_file_count;

// The file a request path names: "/" is index.html, "/NAME" is NAME.
// nullptr for any other path.
const DashboardFile* find_dashboard_file(std::string_view path);

// By extension: html, js, css, svg; the scripts are ES modules, which browsers
// only run with a JavaScript type.
std::string_view dashboard_content_type(std::string_view name);

}  // namespace portico::metrics
