#include "static/mime.hpp"

#include <algorithm>
#include <cctype>

namespace portico::staticfiles {

namespace {

constexpr std::string_view octet_stream = "application/octet-stream";

// The types browsers and CDNs care about; text types say their charset
// because a browser guessing it is a classic source of mojibake and XSS.
constexpr std::pair<std::string_view, std::string_view> built_in[] = {
    {"html", "text/html; charset=utf-8"},
    {"htm", "text/html; charset=utf-8"},
    {"css", "text/css; charset=utf-8"},
    {"js", "text/javascript; charset=utf-8"},
    {"mjs", "text/javascript; charset=utf-8"},
    {"json", "application/json; charset=utf-8"},
    {"map", "application/json; charset=utf-8"},
    {"webmanifest", "application/manifest+json; charset=utf-8"},
    {"txt", "text/plain; charset=utf-8"},
    {"md", "text/markdown; charset=utf-8"},
    {"csv", "text/csv; charset=utf-8"},
    {"xml", "text/xml; charset=utf-8"},
    {"svg", "image/svg+xml; charset=utf-8"},
    {"png", "image/png"},
    {"jpg", "image/jpeg"},
    {"jpeg", "image/jpeg"},
    {"gif", "image/gif"},
    {"webp", "image/webp"},
    {"avif", "image/avif"},
    {"ico", "image/x-icon"},
    {"bmp", "image/bmp"},
    {"woff", "font/woff"},
    {"woff2", "font/woff2"},
    {"ttf", "font/ttf"},
    {"otf", "font/otf"},
    {"pdf", "application/pdf"},
    {"wasm", "application/wasm"},
    {"zip", "application/zip"},
    {"gz", "application/gzip"},
    {"mp4", "video/mp4"},
    {"webm", "video/webm"},
    {"ogg", "audio/ogg"},
    {"mp3", "audio/mpeg"},
    {"wav", "audio/wav"},
};

std::string lower(std::string_view text) {
    std::string result(text);
    std::transform(result.begin(), result.end(), result.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return result;
}

}  // namespace

MimeTypes::MimeTypes(const std::vector<std::pair<std::string, std::string>>& overrides) {
    for (const auto& [extension, type] : built_in) types_.emplace(extension, type);
    for (const auto& [extension, type] : overrides) types_[lower(extension)] = type;
}

std::string_view MimeTypes::for_file(std::string_view file_name) const {
    size_t slash = file_name.rfind('/');
    if (slash != std::string_view::npos) file_name.remove_prefix(slash + 1);
    size_t dot = file_name.rfind('.');
    // No extension, or a dotfile's name (".bashrc") which is not one.
    if (dot == std::string_view::npos || dot == 0) return octet_stream;
    std::string_view extension = file_name.substr(dot + 1);
    char folded[16];
    if (extension.empty() || extension.size() > sizeof folded) return octet_stream;
    for (size_t i = 0; i < extension.size(); ++i)
        folded[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(extension[i])));
    auto it = types_.find(std::string_view(folded, extension.size()));
    return it == types_.end() ? octet_stream : std::string_view(it->second);
}

}  // namespace portico::staticfiles
