#include "worker/error_log.hpp"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace portico::worker {

namespace {

spdlog::level::level_enum to_spdlog(config::LogLevel level) {
    switch (level) {
    case config::LogLevel::trace:
        return spdlog::level::trace;
    case config::LogLevel::debug:
        return spdlog::level::debug;
    case config::LogLevel::info:
        return spdlog::level::info;
    case config::LogLevel::warn:
        return spdlog::level::warn;
    case config::LogLevel::error:
        return spdlog::level::err;
    }
    return spdlog::level::info;
}

}  // namespace

void open_error_log(const config::LogConfig& log, const std::string& role) {
    std::shared_ptr<spdlog::logger> logger;
    if (log.error == "stderr") {
        logger = std::make_shared<spdlog::logger>(
            "error", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    } else {
        try {
            logger = std::make_shared<spdlog::logger>(
                "error", std::make_shared<spdlog::sinks::basic_file_sink_mt>(log.error));
        } catch (const spdlog::spdlog_ex& e) {
            // Keep logging somewhere the operator will look.
            logger = std::make_shared<spdlog::logger>(
                "error", std::make_shared<spdlog::sinks::stderr_sink_mt>());
            logger->error("cannot open error log '{}': {}; logging to stderr", log.error, e.what());
        }
    }
    logger->set_pattern("%Y/%m/%d %H:%M:%S.%e [%l] " + role + ": %v");
    logger->set_level(to_spdlog(log.level));
    logger->flush_on(spdlog::level::trace);
    spdlog::set_default_logger(std::move(logger));
}

}  // namespace portico::worker
