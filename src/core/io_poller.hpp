// The worker's event loop: one epoll instance of our own, in which the
// worker sleeps. It holds the sockets (clients, upstreams, listeners, the
// file cache's change feed) and, as one more descriptor, libuv's own
// backend, which libuv runs (UV_RUN_NOWAIT) on the turns it has work:
// timers due, a signal, a handle closing, a resolver's answer.
//
// Why not one uv_poll_t per socket, as libuv intends: in libuv 1.44,
// uv_poll_init costs three system calls per descriptor (an epoll_ctl ADD and
// DEL to check the descriptor can be polled, and an ioctl(FIONBIO) although
// accept4 and socket already made it non-blocking), and closing the handle a
// fourth (epoll_ctl DEL). For a connection that carries one request (ab, an
// upstream without keep-alive) that is more system calls than the request
// itself. Here a socket costs one epoll_ctl ADD when it first has to wait,
// and nothing when it closes (closing the descriptor takes it out of epoll).
//
// Why libuv inside our set and not ours inside libuv's (as until 2026-12):
// nested in libuv, every turn with a socket ready cost two epoll_waits,
// libuv's and then ours, and a wakeup went through two epoll instances.
// Now a turn costs one; libuv's is only asked on turns it has work.
//
// Rule that follows: libuv registers the descriptors of its own handles
// (uv_poll, uv_tcp, uv_fs_event) only inside uv_run, so a handle of that
// kind started between turns would not be watched until libuv runs for
// another reason. Sockets belong here, as IoWatchers; libuv keeps the
// descriptors it opens itself (signals, its thread pool's wakeups).
//
// The connections' timeouts are the poller's own too (LazyTimer), and so is
// the end of a connection's memory (release_after_turn): a connection never
// makes libuv run.
//
// Level-triggered, like uv_poll: a socket that is not read stays ready.
// Edge-triggered registration (nginx's) was tried for client and upstream
// sockets and not kept: under 1 % of CPU, more instructions per request,
// and every read and write must then say exactly when the socket is
// drained (tests/bench/results/edge-triggered.md).
#pragma once

#include <uv.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "core/lazy_timer.hpp"

namespace portico::core {

class IoWatcher;

// What a watcher asks for and is told about.
enum IoEvent : int { io_readable = 1, io_writable = 2 };

class IoPoller {
public:
    explicit IoPoller(uv_loop_t* loop);
    ~IoPoller();
    IoPoller(const IoPoller&) = delete;
    IoPoller& operator=(const IoPoller&) = delete;

    uv_loop_t* loop() const { return loop_; }
    // Turns until close(), then lets libuv finish what is closing.
    void run();
    // One turn: waits at most `timeout_ms` (-1: until something is ready;
    // shortened to libuv's next timer), reports the ready sockets, then runs
    // libuv if it has work.
    void turn(int timeout_ms);
    // Stops the loop after this turn. Every watcher must be forgotten.
    void close() { closed_ = true; }

    // The loop's time in milliseconds, as of this turn's wait (libuv's).
    uint64_t now_ms() const { return uv_now(loop_); }
    TimerHeap& timers() { return timers_; }
    // Calls `release(object)` at the end of this turn, after every event and
    // timer of the turn: what was collected earlier may still name it.
    void release_after_turn(void* object, void (*release)(void*)) { releases_.emplace_back(object, release); }

private:
    friend class IoWatcher;
    using Release = std::pair<void*, void (*)(void*)>;
    // Milliseconds until libuv has work (0: now; -1: none planned).
    int libuv_timeout() const;
    void report_soon_ones();
    void run_releases();
    static void report(IoWatcher& watcher, uint32_t epoll_events);

    uv_loop_t* loop_;
    int epoll_fd_;
    // Watchers told ready by their owner (report_soon), reported on the
    // next turn without waiting in epoll.
    std::vector<IoWatcher*> soon_;
    std::vector<IoWatcher*> reporting_;  // soon_ as it was at the turn's start
    TimerHeap timers_;
    std::vector<Release> releases_;
    std::vector<Release> releasing_;  // releases_ being run
    bool closed_ = false;
};

// One socket's registration. Its owner must stay in memory until the end of
// the loop turn in which it calls forget() (release_after_turn), because
// events collected earlier in the turn may still point at it.
class IoWatcher {
public:
    // `events`: io_readable / io_writable, the ones asked for that are ready.
    // An error or hang-up on the socket reports every event asked for, so
    // the read or write that follows sees it.
    using Callback = void (*)(void* owner, int events);

    void init(IoPoller& poller, int fd, void* owner, Callback callback);
    // Reports `events` (0: none) from now on; a set equal to the current one
    // costs nothing. False when epoll refused the descriptor (errno set).
    bool watch(int events);
    int events() const { return events_; }
    IoPoller& poller() const { return *poller_; }
    // Reported before the other watchers ready in the same batch (the file
    // cache's change feed: a file changed before a request came must be
    // known stale before that request is served).
    void run_first() { first_ = true; }
    // Reports `events` on the next loop turn although the socket itself may
    // not be ready: bytes wait in a user-space buffer over it (TLS records
    // OpenSSL read ahead), which epoll cannot see.
    void report_soon(int events);
    // No more events, not even ones already collected this turn. Call before
    // closing the descriptor.
    void forget();

private:
    friend class IoPoller;
    IoPoller* poller_ = nullptr;
    void* owner_ = nullptr;
    Callback callback_ = nullptr;  // nullptr once forgotten
    int fd_ = -1;
    int events_ = 0;
    int soon_events_ = 0;  // in the poller's soon_ list when not 0
    bool registered_ = false;  // in the epoll set
    bool first_ = false;
};

}  // namespace portico::core
