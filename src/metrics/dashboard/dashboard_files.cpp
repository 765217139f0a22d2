#include "metrics/dashboard/dashboard_files.hpp"

namespace portico::metrics {

const DashboardFile* find_dashboard_file(std::string_view path) {
    if (path.empty() || path[0] != '/') return nullptr;
    std::string_view name = path == "/" ? "index.html" : path.substr(1);
    for (size_t i = 0; i < dashboard_file_count; ++i)
        if (dashboard_files[i].name == name) return &dashboard_files[i];
    return nullptr;
}

std::string_view dashboard_content_type(std::string_view name) {
    if (name.ends_with(".html")) return "text/html; charset=utf-8";
    if (name.ends_with(".js")) return "text/javascript; charset=utf-8";
    if (name.ends_with(".css")) return "text/css; charset=utf-8";
    if (name.ends_with(".svg")) return "image/svg+xml";
    return "application/octet-stream";
}

}  // namespace portico::metrics
