#include "cli/convert_command.hpp"

#include <cstdio>
#include <filesystem>
#include <string>

#include "convert/convert.hpp"
#include "convert/nginx_parser.hpp"

namespace portico::cli {

namespace {

constexpr const char* convert_usage =
    "usage: portico convert [--prefix DIR] nginx.conf > portico.toml\n";

}  // namespace

int run_convert_command(int argc, char** argv) {
    std::string prefix, file;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg == "--prefix" && i + 1 < argc) {
            prefix = argv[++i];
        } else if (arg == "-h" || arg == "--help") {
            std::fputs(convert_usage, stdout);
            return 0;
        } else if (file.empty() && !arg.starts_with("-")) {
            file = arg;
        } else {
            std::fprintf(stderr, "portico convert: unexpected argument '%s'\n%s", arg.c_str(),
                         convert_usage);
            return 1;
        }
    }
    if (file.empty()) {
        std::fputs(convert_usage, stderr);
        return 1;
    }
    // nginx resolves includes and paths against its prefix; the file's
    // folder is the natural one for a config taken out of /etc/nginx.
    std::error_code error;
    std::filesystem::path folder =
        prefix.empty() ? std::filesystem::path(file).parent_path() : std::filesystem::path(prefix);
    std::string absolute_prefix =
        std::filesystem::absolute(folder.empty() ? "." : folder, error).lexically_normal().string();
    if (absolute_prefix.size() > 1 && absolute_prefix.ends_with('/')) absolute_prefix.pop_back();
    convert::ParsedConfig parsed = convert::parse_nginx_file(file, absolute_prefix);
    convert::Converted converted = convert::convert_nginx(parsed, absolute_prefix);
    for (const convert::Refusal& refusal : converted.refusals)
        std::fprintf(stderr, "%s\n", refusal.to_string().c_str());
    if (converted.toml.empty()) {
        std::fprintf(stderr, "portico convert: %s\n", converted.error.c_str());
        return 1;
    }
    std::fwrite(converted.toml.data(), 1, converted.toml.size(), stdout);
    return converted.refusals.empty() ? 0 : 2;
}

}  // namespace portico::cli
