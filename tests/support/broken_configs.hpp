// Broken config files, each with where its error must point and what it
// must say: the `-t` error tests of every config key share this check.
#pragma once

#include <span>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "config/config.hpp"

namespace portico::test {

struct BrokenConfig {
    const char* what;
    const char* toml;
    const char* at;       // "LINE:COL"
    const char* message;  // a part of the message
};

inline std::string all_messages(const config::LoadResult& result) {
    std::ostringstream out;
    for (const auto& error : result.errors) out << "\n  " << error.to_string();
    return out.str();
}

// Each config is refused, with an error at its position that says its message.
inline void check_broken_configs(std::span<const BrokenConfig> broken_configs,
                                 const std::string& path) {
    for (const BrokenConfig& broken : broken_configs) {
        config::LoadResult result = config::parse_config(broken.toml, path);
        INFO("case: " << broken.what << "\nerrors:" << all_messages(result));
        CHECK_FALSE(result.config);
        std::string expected_start = path + ":" + broken.at + ": ";
        bool found = false;
        for (const auto& error : result.errors) {
            std::string text = error.to_string();
            found = found || (text.starts_with(expected_start) &&
                              text.find(broken.message) != std::string::npos);
        }
        CHECK(found);
    }
}

}  // namespace portico::test
