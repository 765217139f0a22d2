// `user = "NAME"` in [server]: the master stays root (it binds ports below
// 1024, reloads, reopens logs) and each worker switches to the user before
// it serves anything, nginx's model. The master creates the log files and
// hands them to the user, so a worker can still open them by name after
// logrotate moved them away (SIGUSR1), without ever holding root again.
#pragma once

#include <string>

#include "config/config.hpp"

namespace portico::worker {

// The user workers switch to: `user` when set and the process is root. A
// master started as another user cannot switch anyone (nginx ignores `user`
// then too): the master warns (warn_if_user_ignored) and workers run as it.
const config::RunAsUser* worker_user(const config::ServerConfig& server);

// Master, at start and on each reload.
void warn_if_user_ignored(const config::ServerConfig& server);

// Worker, before it opens anything or serves a request: supplementary
// groups, group, user (real, effective, saved; the file system ids follow),
// each checked, then checked again from the kernel's side, and
// PR_SET_NO_NEW_PRIVS. False with `error` saying which step failed: the
// worker must exit rather than go on as root.
bool switch_to_user(const config::RunAsUser& user, std::string& error);

// Master, before workers start (at start, on reload) and before it tells
// them to reopen (SIGUSR1): creates each log file and gives it to the user.
void hand_log_files_to(const config::LogConfig& log, const config::RunAsUser& user);

}  // namespace portico::worker
