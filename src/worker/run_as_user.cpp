#include "worker/run_as_user.hpp"

#include <fcntl.h>
#include <grp.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/log.hpp"
#include "core/unique_fd.hpp"

namespace portico::worker {

const config::RunAsUser* worker_user(const config::ServerConfig& server) {
    return server.user && ::geteuid() == 0 ? &*server.user : nullptr;
}

void warn_if_user_ignored(const config::ServerConfig& server) {
    if (!server.user || worker_user(server) || server.user->uid == ::geteuid()) return;
    log::warn(
        "user = \"{}\" is ignored: only a master started as root can switch users; "
        "workers run as uid {} like the master",
        server.user->name, ::geteuid());
}

bool switch_to_user(const config::RunAsUser& user, std::string& error) {
    auto failed = [&](const std::string& step) {
        error = step + ": " + std::strerror(errno);
        return false;
    };
    // Groups before the user: once the uid is not 0 they can no longer be
    // changed, and root's supplementary groups (0 among them) would stay.
    if (::initgroups(user.name.c_str(), user.gid) != 0) return failed("initgroups");
    if (::setresgid(user.gid, user.gid, user.gid) != 0)
        return failed("setresgid(" + std::to_string(user.gid) + ")");
    // Real, effective and saved all change, so nothing keeps a way back; the
    // kernel then also clears every capability (no SECBIT_KEEP_CAPS here).
    if (::setresuid(user.uid, user.uid, user.uid) != 0)
        return failed("setresuid(" + std::to_string(user.uid) + ")");
    uid_t ruid, euid, suid;
    gid_t rgid, egid, sgid;
    ::getresuid(&ruid, &euid, &suid);
    ::getresgid(&rgid, &egid, &sgid);
    if (ruid != user.uid || euid != user.uid || suid != user.uid || rgid != user.gid ||
        egid != user.gid || sgid != user.gid) {
        error = "the kernel reports other ids after the switch";
        return false;
    }
    // OpenSSH's paranoia: if root can be had back, the switch did not happen.
    if (user.uid != 0 && (::setuid(0) == 0 || ::seteuid(0) == 0)) {
        error = "root could be regained after setresuid";
        return false;
    }
    // Workers never exec, but code that takes one over might: a set-user-ID
    // program (su, sudo) or file capabilities then grant nothing.
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return failed("prctl(PR_SET_NO_NEW_PRIVS)");
    return true;
}

namespace {

bool is_file_target(const std::string& target) {
    return target != "stderr" && target != "stdout" && target != "off";
}

// The master is root and the file's folder may be writable by the user
// (logrotate's `create` setups, a folder chowned for convenience): a worker
// taken over could then put a link to /etc/shadow where the log was, and
// root opening the name would follow it. Hence O_NOFOLLOW, and a file
// with one link only: a hard link could name anything.
void hand_file_to(const std::string& path, const config::RunAsUser& user) {
    core::UniqueFd fd(::open(path.c_str(),
                             O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
                             0644));
    if (!fd) {
        log::error("cannot prepare log file '{}' for user {}: {}{}", path, user.name,
                   std::strerror(errno),
                   errno == ELOOP ? " (a symbolic link: name the file itself)" : "");
        return;
    }
    struct stat file;
    if (::fstat(fd.get(), &file) != 0 || !S_ISREG(file.st_mode) || file.st_nlink != 1) {
        log::error("not handing log file '{}' to user {}: not a regular file with one link", path,
                   user.name);
        return;
    }
    if ((file.st_uid != user.uid || file.st_gid != user.gid) &&
        ::fchown(fd.get(), user.uid, user.gid) != 0)
        log::error("cannot give log file '{}' to user {}: {}", path, user.name,
                   std::strerror(errno));
    std::string folder = std::filesystem::path(path).parent_path().string();
    struct stat parent;
    if (::stat(folder.c_str(), &parent) == 0 &&
        (parent.st_uid == user.uid || (parent.st_mode & S_IWOTH) ||
         ((parent.st_mode & S_IWGRP) && parent.st_gid == user.gid)))
        log::warn(
            "log folder '{}' is writable by user {}, whose workers could replace a log "
            "file with a link the master (root) would write to; make it root's",
            folder, user.name);
}

}  // namespace

void hand_log_files_to(const config::LogConfig& log, const config::RunAsUser& user) {
    for (const std::string* target : {&log.error, &log.access})
        if (is_file_target(*target)) hand_file_to(*target, user);
}

}  // namespace portico::worker
