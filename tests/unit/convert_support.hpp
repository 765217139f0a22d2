// For the convert unit tests: an nginx http block converted in a temp
// folder (with a www/ root), its refusals as text, and what portico's own
// loader says of the result.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "convert/convert.hpp"
#include "convert/nginx_parser.hpp"

namespace portico::test::convert_support {

class Folder {
public:
    Folder() {
        char name[] = "/tmp/portico-convert-XXXXXX";
        path_ = ::mkdtemp(name);
        std::filesystem::create_directories(path_ + "/www/docs");
    }
    ~Folder() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    Folder(const Folder&) = delete;
    Folder& operator=(const Folder&) = delete;
    const std::string& path() const { return path_; }
    void write(const std::string& relative, const std::string& text) const {
        std::filesystem::path full = std::filesystem::path(path_) / relative;
        std::filesystem::create_directories(full.parent_path());
        std::ofstream(full) << text;
    }

private:
    std::string path_;
};

struct Result {
    std::string toml;
    std::vector<std::string> refusals;       // "nginx.conf:LINE: directive: why"
    std::vector<std::string> config_errors;  // portico's loader on the toml
    std::string error;                       // nothing written

    bool refused(const std::string& directive_start) const {
        for (const std::string& refusal : refusals) {
            if (refusal.find(": " + directive_start) != std::string::npos) return true;
        }
        return false;
    }
    bool has(const std::string& text) const { return toml.find(text) != std::string::npos; }
};

inline Result convert_file_text(const Folder& folder, const std::string& text) {
    std::string file = folder.path() + "/nginx.conf";
    convert::ParsedConfig parsed = convert::parse_nginx_text(text, file, folder.path());
    convert::Converted converted = convert::convert_nginx(parsed, folder.path());
    Result result;
    result.toml = converted.toml;
    result.error = converted.error;
    for (const convert::Refusal& refusal : converted.refusals) {
        std::string line = refusal.to_string();
        size_t name = line.find("nginx.conf:");
        result.refusals.push_back(name == std::string::npos ? line : line.substr(name));
    }
    if (!result.toml.empty()) {
        config::LoadResult loaded =
            config::parse_config(result.toml, folder.path() + "/portico.toml");
        for (const config::ConfigError& error : loaded.errors)
            result.config_errors.push_back(error.to_string());
    }
    return result;
}

// `http_body` inside `events {} http { ... }`: line 3 is its first line.
inline Result convert_http(const Folder& folder, const std::string& http_body) {
    return convert_file_text(folder, "events {}\nhttp {\n" + http_body + "\n}\n");
}

}  // namespace portico::test::convert_support
