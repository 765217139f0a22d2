// The error log: spdlog's default logger, to stderr or a file, tagged with the
// process role ("master", "worker 0") so one stream from several processes
// stays readable. (The access log is its own async logger: metrics issue.)
#pragma once

#include <spdlog/spdlog.h>

#include <string>

#include "config/config.hpp"

namespace portico::core {

// (Re)creates the error logger; called at start, after fork with the
// worker's role, and on SIGUSR1 so logrotate's moved file is let go.
void open_error_log(const config::LogConfig& log, const std::string& role);

}  // namespace portico::core
