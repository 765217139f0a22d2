// The error log, as the code writes to it: a level check and one call into
// log.cpp, over fmt/core.h only, so that a file that logs does not compile
// spdlog's and fmt/format.h's templates. The logger behind it is spdlog's
// default logger (worker/error_log.hpp opens it, to stderr or a file, tagged
// with the process role). The access log is its own async logger: metrics.
#pragma once

#include <fmt/core.h>

#include <utility>

namespace portico::log {

// In spdlog's order (spdlog::level::level_enum), which log.cpp checks.
enum class Level { trace, debug, info, warn, error, critical };

// Whether the error log takes lines of this level now.
bool enabled(Level level) noexcept;

// Formats the line and hands it to the error log (no level check).
void write(Level level, fmt::string_view format, fmt::format_args args) noexcept;

template <typename... Args>
void log(Level level, fmt::format_string<Args...> format, Args&&... args) {
    if (enabled(level)) write(level, format, fmt::make_format_args(args...));
}

template <typename... Args>
void trace(fmt::format_string<Args...> format, Args&&... args) {
    log(Level::trace, format, std::forward<Args>(args)...);
}

template <typename... Args>
void debug(fmt::format_string<Args...> format, Args&&... args) {
    log(Level::debug, format, std::forward<Args>(args)...);
}

template <typename... Args>
void info(fmt::format_string<Args...> format, Args&&... args) {
    log(Level::info, format, std::forward<Args>(args)...);
}

template <typename... Args>
void warn(fmt::format_string<Args...> format, Args&&... args) {
    log(Level::warn, format, std::forward<Args>(args)...);
}

template <typename... Args>
void error(fmt::format_string<Args...> format, Args&&... args) {
    log(Level::error, format, std::forward<Args>(args)...);
}

template <typename... Args>
void critical(fmt::format_string<Args...> format, Args&&... args) {
    log(Level::critical, format, std::forward<Args>(args)...);
}

}  // namespace portico::log
