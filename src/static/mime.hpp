// Content-Type by file extension: a built-in table of the common web types,
// extended or overridden by the config's [mime] table.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace portico::staticfiles {

class MimeTypes {
public:
    // `overrides`: extension (lower case, no dot) -> type, from [mime].
    explicit MimeTypes(const std::vector<std::pair<std::string, std::string>>& overrides = {});

    // The Content-Type for a file name ("app.JS" -> "text/javascript;
    // charset=utf-8"); text types carry charset=utf-8; unknown types are
    // application/octet-stream.
    std::string_view for_file(std::string_view file_name) const;

private:
    struct Hash {
        using is_transparent = void;
        size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
    };
    std::unordered_map<std::string, std::string, Hash, std::equal_to<>> types_;
};

}  // namespace portico::staticfiles
