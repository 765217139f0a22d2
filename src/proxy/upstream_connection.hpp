// One TCP connection to an upstream server: the socket, a uv_poll_t that
// owns it (the same I/O design as client connections, so the proxy reads and
// writes with its own system calls and sees back-pressure exactly), and one
// timer. Whoever uses it (an exchange, or the idle pool) is its Owner and
// gets its events. Memory is freed only after libuv closed both handles.
#pragma once

#include <uv.h>

#include <cstdint>
#include <string>

#include "core/lazy_timer.hpp"

namespace portico::proxy {

struct UpstreamServer;

class UpstreamConnection {
public:
    class Owner {
    public:
        // `events`: UV_READABLE / UV_WRITABLE, or `status` < 0 on a poll error.
        virtual void on_upstream_event(UpstreamConnection& connection, int status, int events) = 0;
        virtual void on_upstream_timeout(UpstreamConnection& connection) = 0;

    protected:
        ~Owner() = default;
    };

    // Starts a non-blocking connect; nullptr (and `error`, an errno) when
    // even that fails. Wait for UV_WRITABLE, then call finish_connect().
    static UpstreamConnection* open(uv_loop_t* loop, UpstreamServer& server, int& error);

    // 0 when the connection is established, else the errno of the failure.
    int finish_connect();

    // Hands the events to `owner`: `events` says which are wanted (0: none).
    // Keep UV_READABLE on between owners (pool, exchange): an unchanged set
    // costs no epoll_ctl, and a request on a pooled connection then costs no
    // epoll system call at all.
    void watch(Owner* owner, int events);
    void arm_timer(uint64_t timeout_ms);
    void stop_timer();
    void close();

    int fd() const { return fd_; }
    UpstreamServer& server() const { return server_; }
    bool connected = false;
    uint32_t requests = 0;  // exchanges completed on it: > 0 means reused

    // Place in the server's idle pool.
    UpstreamConnection* idle_next = nullptr;
    UpstreamConnection* idle_prev = nullptr;
    uint64_t keep_alive_ms = 0;  // how long it may idle, from the last response

private:
    UpstreamConnection(uv_loop_t* loop, UpstreamServer& server, int fd);
    ~UpstreamConnection();
    static void on_poll(uv_poll_t* handle, int status, int events);
    static void on_timer(void* connection);
    static void on_closed(uv_handle_t* handle);

    UpstreamServer& server_;
    int fd_;
    uv_poll_t poll_;
    core::LazyTimer timer_;
    Owner* owner_ = nullptr;
    int events_ = 0;
    int open_handles_ = 2;
    bool closing_ = false;
};

}  // namespace portico::proxy
