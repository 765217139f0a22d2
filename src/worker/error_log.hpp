// Opens the error log that core/log.hpp writes to: spdlog's default logger,
// to stderr or a file, tagged with the process role ("master", "worker 0")
// so one stream from several processes stays readable.
#pragma once

#include <string>

#include "config/config.hpp"

namespace portico::worker {

// (Re)creates the error logger; called at start, after fork with the
// worker's role, and on SIGUSR1 so logrotate's moved file is let go.
void open_error_log(const config::LogConfig& log, const std::string& role);

}  // namespace portico::worker
