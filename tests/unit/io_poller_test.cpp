// core::IoPoller on real sockets (socketpairs) and a real libuv loop.
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <vector>

#include <catch2/catch.hpp>

#include "core/io_poller.hpp"

using portico::core::io_readable;
using portico::core::io_writable;
using portico::core::IoPoller;
using portico::core::IoWatcher;

namespace {

struct SocketPair {
    SocketPair() { REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds) == 0); }
    ~SocketPair() {
        if (fds[0] >= 0) ::close(fds[0]);
        if (fds[1] >= 0) ::close(fds[1]);
    }
    int fds[2] = {-1, -1};
};

// A watcher that records what it was told, and may forget another one.
struct Recorder {
    IoWatcher watcher;
    int calls = 0;
    int last_events = 0;
    IoWatcher* forget_on_event = nullptr;

    void attach(IoPoller& poller, int fd) { watcher.init(poller, fd, this, on_event); }

    static void on_event(void* self, int events) {
        auto* recorder = static_cast<Recorder*>(self);
        ++recorder->calls;
        recorder->last_events = events;
        if (recorder->forget_on_event) recorder->forget_on_event->forget();
    }
};

struct Loop {
    Loop() {
        uv_loop_init(&loop);
        poller = std::make_unique<IoPoller>(&loop);
    }
    ~Loop() {
        poller.reset();
        uv_loop_close(&loop);
    }
    // One turn that does not block: whatever is ready now is reported.
    void turn() { poller->turn(0); }
    uv_loop_t loop;
    std::unique_ptr<IoPoller> poller;
};

}  // namespace

TEST_CASE("io poller: reports readable data, and nothing once the watcher asks for nothing") {
    Loop loop;
    SocketPair pair;
    Recorder recorder;
    recorder.attach(*loop.poller, pair.fds[0]);
    REQUIRE(recorder.watcher.watch(io_readable));

    loop.turn();
    CHECK(recorder.calls == 0);  // nothing sent yet

    REQUIRE(::write(pair.fds[1], "x", 1) == 1);
    loop.turn();
    CHECK(recorder.calls == 1);
    CHECK(recorder.last_events == io_readable);

    // Level-triggered: unread data is reported again.
    loop.turn();
    CHECK(recorder.calls == 2);

    REQUIRE(recorder.watcher.watch(0));
    loop.turn();
    CHECK(recorder.calls == 2);

    // Asked again: the data still waiting is reported.
    REQUIRE(recorder.watcher.watch(io_readable | io_writable));
    loop.turn();
    CHECK(recorder.calls == 3);
    CHECK(recorder.last_events == (io_readable | io_writable));
}

TEST_CASE("io poller: a watcher forgotten during a turn gets none of that turn's events") {
    Loop loop;
    SocketPair first, second;
    Recorder a, b;
    a.attach(*loop.poller, first.fds[0]);
    b.attach(*loop.poller, second.fds[0]);
    // Whichever is reported first forgets the other: one call in all.
    a.forget_on_event = &b.watcher;
    b.forget_on_event = &a.watcher;
    REQUIRE(a.watcher.watch(io_readable));
    REQUIRE(b.watcher.watch(io_readable));
    REQUIRE(::write(first.fds[1], "x", 1) == 1);
    REQUIRE(::write(second.fds[1], "y", 1) == 1);

    loop.turn();
    CHECK(a.calls + b.calls == 1);
    // A forgotten watcher stays silent, and watching again is ignored.
    IoWatcher& forgotten = a.calls == 0 ? a.watcher : b.watcher;
    CHECK(forgotten.watch(io_readable));
    loop.turn();
    CHECK(a.calls + b.calls == 2);  // only the live one, again (level-triggered)
}

TEST_CASE("io poller: a peer that hangs up is reported as the events asked for") {
    Loop loop;
    SocketPair pair;
    Recorder recorder;
    recorder.attach(*loop.poller, pair.fds[0]);
    REQUIRE(recorder.watcher.watch(io_writable));
    loop.turn();
    CHECK(recorder.calls == 1);
    CHECK(recorder.last_events == io_writable);

    REQUIRE(recorder.watcher.watch(io_readable));
    ::close(pair.fds[1]);
    pair.fds[1] = -1;
    loop.turn();
    CHECK(recorder.calls == 2);
    CHECK(recorder.last_events == io_readable);
    char byte;
    CHECK(::read(pair.fds[0], &byte, 1) == 0);  // the read sees the end
}

TEST_CASE("io poller: a watcher marked run_first is told before the rest of its batch") {
    // Each watcher appends its number to `order` when told.
    struct Numbered {
        IoWatcher watcher;
        int number = 0;
        std::vector<int>* order = nullptr;
        static void on_event(void* self, int) {
            auto* numbered = static_cast<Numbered*>(self);
            numbered->order->push_back(numbered->number);
        }
    };
    Loop loop;
    std::vector<int> order;
    SocketPair pairs[5];
    Numbered watchers[5];
    // Watcher 4 is made ready last, so epoll's own order puts it last.
    for (int i = 0; i < 5; ++i) {
        watchers[i].number = i;
        watchers[i].order = &order;
        watchers[i].watcher.init(*loop.poller, pairs[i].fds[0], &watchers[i], Numbered::on_event);
        if (i == 4) watchers[i].watcher.run_first();
        REQUIRE(watchers[i].watcher.watch(io_readable));
        REQUIRE(::write(pairs[i].fds[1], "x", 1) == 1);
    }
    loop.turn();
    REQUIRE(order.size() == 5);
    CHECK(order.front() == 4);
    // Told once each: the first-run watcher is not told again with the rest.
    CHECK(std::count(order.begin(), order.end(), 4) == 1);
}
