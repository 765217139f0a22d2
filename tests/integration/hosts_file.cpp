#include "hosts_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stdexcept>

namespace portico::test {

namespace {

constexpr const char* hosts_path = "/etc/hosts";

}  // namespace

HostsFileEntry::HostsFileEntry(std::string name) : name_(std::move(name)) {
    fd_ = ::open(hosts_path, O_RDWR | O_CLOEXEC);
    if (fd_ < 0) return;
    // ctest runs test cases in parallel processes: one tail at a time, or
    // one would cut the other's lines. Released with the descriptor, at the
    // entry's end or the process's.
    ::flock(fd_, LOCK_EX);
    struct stat info {};
    ::fstat(fd_, &info);
    original_size_ = info.st_size;
    char last = '\n';
    if (original_size_ > 0) (void)!::pread(fd_, &last, 1, original_size_ - 1);
    needs_newline_ = last != '\n';
}

HostsFileEntry::~HostsFileEntry() {
    if (fd_ < 0) return;
    // Only ever shorter: a truncate to a size the file no longer has would
    // pad it with NUL bytes.
    if (::lseek(fd_, 0, SEEK_END) > original_size_) (void)!::ftruncate(fd_, original_size_);
    ::close(fd_);
}

void HostsFileEntry::map_to(const std::vector<std::string>& ips) {
    std::string tail = needs_newline_ ? "\n" : "";
    for (const std::string& ip : ips) tail += ip + " " + name_ + "\n";
    write_tail(tail);
}

void HostsFileEntry::remove() {
    write_tail("");
}

// Written first, then cut to length: a reader in between sees at worst a
// stale fragment of our own lines, never a change to the others.
void HostsFileEntry::write_tail(const std::string& tail) {
    if (fd_ < 0) throw std::runtime_error("/etc/hosts is not writable");
    if (!tail.empty() && ::pwrite(fd_, tail.data(), tail.size(), original_size_) !=
                             static_cast<ssize_t>(tail.size()))
        throw std::runtime_error("cannot write /etc/hosts");
    if (::ftruncate(fd_, original_size_ + static_cast<off_t>(tail.size())) != 0)
        throw std::runtime_error("cannot truncate /etc/hosts");
}

}  // namespace portico::test
