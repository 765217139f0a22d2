// staticfiles::FileCache on real files, a real inotify instance and a real
// libuv loop: entries follow the disk through the kernel's change events,
// and still do when the events are lost or inotify can't be had.
#include <fcntl.h>
#include <sys/inotify.h>
#include <unistd.h>
#include <uv.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "core/io_poller.hpp"
#include "static/file_cache.hpp"

using portico::staticfiles::FileCache;
using portico::staticfiles::OpenFile;
using portico::staticfiles::Root;

namespace {

namespace fs = std::filesystem;

struct Folder {
    Folder() {
        char pattern[] = "/tmp/portico-cache-XXXXXX";
        REQUIRE(::mkdtemp(pattern) != nullptr);
        path = pattern;
        root.fd.reset(::open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
        char real[PATH_MAX];
        REQUIRE(::realpath(path.c_str(), real) != nullptr);
        root.real_path = real;
    }
    ~Folder() {
        std::error_code ignored;
        fs::remove_all(path, ignored);
    }
    void write(const std::string& name, const std::string& content) const {
        std::ofstream(path + "/" + name, std::ios::binary | std::ios::trunc) << content;
    }
    std::string path;
    Root root;
};

struct CacheLoop {
    CacheLoop() {
        uv_loop_init(&loop);
        poller = std::make_unique<portico::core::IoPoller>(&loop);
    }
    ~CacheLoop() {
        cache.reset();
        poller.reset();
        uv_loop_close(&loop);
    }
    FileCache& make_cache() {
        cache = std::make_unique<FileCache>(*poller);
        return *cache;
    }
    void turn() { poller->turn(0); }
    uv_loop_t loop;
    std::unique_ptr<portico::core::IoPoller> poller;
    std::unique_ptr<FileCache> cache;
};

std::string contents_of(FileCache& cache, const Root& root, const std::string& name) {
    int error = 0;
    std::shared_ptr<const OpenFile> file = cache.open(root, name, error);
    if (!file) return "error " + std::to_string(error);
    REQUIRE(file->has_contents);
    return file->contents;
}

}  // namespace

TEST_CASE("file cache: a hit is the same entry until the kernel reports a change") {
    Folder folder;
    folder.write("a.txt", "one");
    CacheLoop loop;
    FileCache& cache = loop.make_cache();
    int error = 0;
    auto first = cache.open(folder.root, "a.txt", error);
    REQUIRE(first);
    CHECK(cache.open(folder.root, "a.txt", error) == first);  // cached: no open, no fstat

    folder.write("a.txt", "two");
    loop.turn();  // the change event
    auto second = cache.open(folder.root, "a.txt", error);
    REQUIRE(second);
    CHECK(second != first);
    CHECK(second->contents == "two");
    CHECK(first->contents == "one");  // a response in flight keeps what it had
}

TEST_CASE("file cache: events lost to a queue overflow drop every entry") {
    Folder folder;
    folder.write("a.txt", "one");
    CacheLoop loop;
    FileCache& cache = loop.make_cache();
    CHECK(contents_of(cache, folder.root, "a.txt") == "one");
    // More events than the kernel queues (fs.inotify.max_queued_events,
    // 16384 by default) while the loop does not read them: distinct names,
    // since identical consecutive events are merged.
    long queue_limit = 16384;
    std::ifstream("/proc/sys/fs/inotify/max_queued_events") >> queue_limit;
    for (long i = 0; i <= queue_limit; ++i) folder.write("f" + std::to_string(i), "");
    folder.write("a.txt", "two");
    loop.turn();
    CHECK(contents_of(cache, folder.root, "a.txt") == "two");
}

TEST_CASE("file cache: without inotify, each open checks the file again") {
    Folder folder;
    folder.write("a.txt", "one");
    // Every inotify instance this user may have, taken: the cache gets none.
    std::vector<int> taken;
    for (int fd; taken.size() < 4096 && (fd = ::inotify_init1(IN_CLOEXEC)) >= 0;) taken.push_back(fd);
    CacheLoop loop;
    FileCache& cache = loop.make_cache();
    for (int fd : taken) ::close(fd);

    CHECK(contents_of(cache, folder.root, "a.txt") == "one");
    folder.write("a.txt", "two");  // no event will come, and no loop turn either
    CHECK(contents_of(cache, folder.root, "a.txt") == "two");
    ::unlink((folder.path + "/a.txt").c_str());
    CHECK(contents_of(cache, folder.root, "a.txt") == "error " + std::to_string(ENOENT));
}
