#include "core/log.hpp"

#include <spdlog/spdlog.h>

#include <exception>

namespace portico::log {

namespace {

static_assert(static_cast<int>(Level::trace) == spdlog::level::trace);
static_assert(static_cast<int>(Level::debug) == spdlog::level::debug);
static_assert(static_cast<int>(Level::info) == spdlog::level::info);
static_assert(static_cast<int>(Level::warn) == spdlog::level::warn);
static_assert(static_cast<int>(Level::error) == spdlog::level::err);
static_assert(static_cast<int>(Level::critical) == spdlog::level::critical);

spdlog::level::level_enum to_spdlog(Level level) {
    return static_cast<spdlog::level::level_enum>(level);
}

}  // namespace

bool enabled(Level level) noexcept {
    return spdlog::default_logger_raw()->should_log(to_spdlog(level));
}

void write(Level level, fmt::string_view format, fmt::format_args args) noexcept {
    spdlog::logger* logger = spdlog::default_logger_raw();
    // What spdlog::logger::log(level, fmt, args...) does: format into a
    // stack buffer, then log the text (which catches the sinks' exceptions).
    fmt::memory_buffer line;
    try {
        fmt::vformat_to(fmt::appender(line), format, args);
    } catch (const std::exception& e) {
        logger->log(spdlog::level::err, "cannot format a log line ('{}'): {}",
                    std::string_view(format.data(), format.size()), e.what());
        return;
    } catch (...) {
        return;
    }
    logger->log(to_spdlog(level), spdlog::string_view_t(line.data(), line.size()));
}

}  // namespace portico::log
