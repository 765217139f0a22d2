// Lines of /etc/hosts owned by a test, for the `resolve` tests: glibc reads
// the file again on every getaddrinfo, so changing it changes what the
// workers' next lookup answers, with no DNS server and no test-only knob in
// portico. It needs root (CI runs as root).
//
// The file is changed in place, never renamed (in a container /etc/hosts is
// a bind mount), and only after its original bytes, which stay as they were:
// other tests resolving "localhost" meanwhile never read a half-written line
// of theirs. The destructor truncates the file back to its original size.
// Entries in two processes take turns (an exclusive flock for the entry's
// life).
#pragma once

#include <string>
#include <vector>

namespace portico::test {

class HostsFileEntry {
public:
    // `name` should be unique to the test run (a pid in it, under .invalid).
    explicit HostsFileEntry(std::string name);
    ~HostsFileEntry();
    HostsFileEntry(const HostsFileEntry&) = delete;
    HostsFileEntry& operator=(const HostsFileEntry&) = delete;

    // False when /etc/hosts cannot be written (not root).
    bool writable() const { return fd_ >= 0; }
    const std::string& name() const { return name_; }
    // The name resolves to these addresses from the next lookup on.
    void map_to(const std::vector<std::string>& ips);
    // The name no longer resolves (its lines go).
    void remove();

private:
    void write_tail(const std::string& tail);

    std::string name_;
    int fd_ = -1;
    long original_size_ = 0;
    bool needs_newline_ = false;  // the original does not end with one
};

}  // namespace portico::test
