#include "acme/storage.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/unique_fd.hpp"

namespace portico::acme {

std::optional<std::string> read_stored(const std::string& path) {
    core::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) return std::nullopt;
    std::string text;
    char buffer[8192];
    for (;;) {
        ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return std::nullopt;
        if (n == 0) return text;
        text.append(buffer, static_cast<size_t>(n));
    }
}

bool write_stored(const std::string& path, std::string_view text, std::string& error) {
    std::string temporary = path + ".new";
    ::unlink(temporary.c_str());
    core::UniqueFd fd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    bool good = static_cast<bool>(fd);
    for (size_t written = 0; good && written < text.size();) {
        ssize_t n = ::write(fd.get(), text.data() + written, text.size() - written);
        if (n < 0 && errno == EINTR) continue;
        good = n > 0;
        if (good) written += static_cast<size_t>(n);
    }
    good = good && ::fsync(fd.get()) == 0;
    fd = core::UniqueFd();
    good = good && ::rename(temporary.c_str(), path.c_str()) == 0;
    if (!good) {
        error = "cannot write " + path + ": " + std::strerror(errno);
        ::unlink(temporary.c_str());
    }
    return good;
}

}  // namespace portico::acme
