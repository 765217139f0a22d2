#include "worker/service_notify.hpp"

#include <systemd/sd-daemon.h>

#include <cstdint>
#include <ctime>

namespace portico::worker::service_notify {

namespace {

uint64_t monotonic_usec() {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<uint64_t>(now.tv_sec) * 1'000'000 +
           static_cast<uint64_t>(now.tv_nsec) / 1000;
}

// unset_environment = 0: workers inherit NOTIFY_SOCKET but never write to
// it, and systemd (NotifyAccess=main) would ignore them if they did.
void send(const std::string& message) { sd_notify(0, message.c_str()); }

}  // namespace

void ready(const std::string& status) { send("READY=1\nSTATUS=" + status); }

void reloading() {
    send("RELOADING=1\nSTATUS=reloading\nMONOTONIC_USEC=" + std::to_string(monotonic_usec()));
}

void stopping(const std::string& status) { send("STOPPING=1\nSTATUS=" + status); }

}  // namespace portico::worker::service_notify
