// core::IoPoller on real sockets (socketpairs) and a real libuv loop.
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <string>
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

struct PollerLoop {
    PollerLoop() {
        uv_loop_init(&loop);
        poller = std::make_unique<IoPoller>(&loop);
    }
    ~PollerLoop() {
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
    PollerLoop loop;
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
    PollerLoop loop;
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
    PollerLoop loop;
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
    PollerLoop loop;
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

namespace {

// A timer that counts its firings, and may cancel or re-arm another.
struct CountingTimer {
    portico::core::LazyTimer timer;
    int fired = 0;
    CountingTimer* cancel_on_fire = nullptr;
    static void on_fire(void* self) {
        auto* counting = static_cast<CountingTimer*>(self);
        ++counting->fired;
        if (counting->cancel_on_fire) counting->cancel_on_fire->timer.cancel();
    }
};

// Turns (each waiting as the poller decides, at most 50 ms) until `done`
// or 2 s have passed.
template <typename Done>
void turn_until(PollerLoop& loop, Done done) {
    uint64_t start = uv_hrtime();
    while (!done() && uv_hrtime() - start < 2'000'000'000) loop.poller->turn(50);
}

}  // namespace

TEST_CASE("io poller: timers fire once, at their last deadline, and disarmed or cancelled ones never") {
    PollerLoop loop;
    CountingTimer soon, moved, disarmed, cancelled;
    for (CountingTimer* timer : {&soon, &moved, &disarmed, &cancelled})
        timer->timer.init(*loop.poller, timer, CountingTimer::on_fire);
    // Deadlines count from the loop's time, in whole milliseconds: 1 ms of slack below.
    uv_update_time(&loop.loop);
    uint64_t start = uv_hrtime();
    soon.timer.arm(20);
    moved.timer.arm(20);
    moved.timer.arm(120);  // moved later: fires at 120, not 20
    disarmed.timer.arm(20);
    disarmed.timer.disarm();
    cancelled.timer.arm(20);
    cancelled.timer.cancel();
    turn_until(loop, [&] { return soon.fired > 0; });
    CHECK(soon.fired == 1);
    uint64_t elapsed_ms = (uv_hrtime() - start) / 1'000'000;
    CHECK(elapsed_ms >= 19);
    if (elapsed_ms < 120) CHECK(moved.fired == 0);  // unless this machine stalled past it
    turn_until(loop, [&] { return moved.fired > 0; });
    CHECK(moved.fired == 1);
    CHECK((uv_hrtime() - start) / 1'000'000 >= 119);
    // Each fired once: nothing more to fire.
    loop.turn();
    CHECK(soon.fired == 1);
    CHECK(moved.fired == 1);
    CHECK(disarmed.fired == 0);
    CHECK(cancelled.fired == 0);
    // A cancelled timer stays silent when armed again.
    cancelled.timer.arm(0);
    loop.turn();
    CHECK(cancelled.fired == 0);
}

TEST_CASE("io poller: a timer cancelled by another due in the same turn does not fire, and a turn with a timer "
          "due does not wait") {
    PollerLoop loop;
    CountingTimer first, second;
    first.timer.init(*loop.poller, &first, CountingTimer::on_fire);
    second.timer.init(*loop.poller, &second, CountingTimer::on_fire);
    first.cancel_on_fire = &second;
    second.cancel_on_fire = &first;
    first.timer.arm(0);
    second.timer.arm(0);
    uint64_t start = uv_hrtime();
    loop.poller->turn(5'000);  // both are due: no wait
    CHECK((uv_hrtime() - start) / 1'000'000 < 1'000);
    CHECK(first.fired + second.fired == 1);
}

TEST_CASE("io poller: release_after_turn runs after the turn's events, releases made by a release included") {
    PollerLoop loop;
    SocketPair pair;
    struct Releasing {
        IoWatcher watcher;
        IoPoller* poller = nullptr;
        std::vector<std::string>* log = nullptr;
        static void on_event(void* self, int) {
            auto* releasing = static_cast<Releasing*>(self);
            releasing->log->push_back("event");
            releasing->watcher.forget();
            releasing->poller->release_after_turn(releasing, release_first);
            releasing->log->push_back("event done");
        }
        static void release_first(void* self) {
            auto* releasing = static_cast<Releasing*>(self);
            releasing->log->push_back("released");
            releasing->poller->release_after_turn(self, release_second);
        }
        static void release_second(void* self) { static_cast<Releasing*>(self)->log->push_back("released again"); }
    };
    std::vector<std::string> log;
    Releasing releasing;
    releasing.poller = loop.poller.get();
    releasing.log = &log;
    releasing.watcher.init(*loop.poller, pair.fds[0], &releasing, Releasing::on_event);
    REQUIRE(releasing.watcher.watch(io_readable));
    REQUIRE(::write(pair.fds[1], "x", 1) == 1);
    loop.turn();
    CHECK(log == std::vector<std::string>{"event", "event done", "released", "released again"});
}
